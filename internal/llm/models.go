package llm

import "strings"

// DefaultContextWindow is assumed for models the table does not know.
const DefaultContextWindow = 128_000

// windows maps model-name prefixes to context windows in tokens; the longest
// matching prefix wins, so specific entries can refine family ones.
var windows = []struct {
	prefix string
	tokens int
}{
	{"claude-", 200_000},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4", 8_192},
	{"gpt-4-32k", 32_768},
	{"gpt-4.5", 128_000},
	{"chatgpt-4o", 128_000},
	{"o1-mini", 128_000},
	{"o1-preview", 128_000},
	{"gpt-3.5-turbo", 16_385},
	{"gpt-5", 400_000},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
	{"llama3.1", 131_072},
	{"llama3.2", 131_072},
	{"llama3.3", 131_072},
	{"qwen2.5", 32_768},
	{"qwen3", 40_960},
	{"mistral", 32_768},
	{"deepseek", 128_000},
	{"gemma3", 131_072},
	{"gemini-", 1_048_576},
}

// LookupContextWindow returns the context window of model, if known.
func LookupContextWindow(model string) (int, bool) {
	m := strings.ToLower(model)
	// Provider-qualified names ("anthropic/claude-…", "library/qwen3:8b") use the last part.
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	best, n := 0, 0
	for _, w := range windows {
		if strings.HasPrefix(m, w.prefix) && len(w.prefix) > best {
			best, n = len(w.prefix), w.tokens
		}
	}
	return n, best > 0
}

// ContextWindow returns the context window of model in tokens, or
// DefaultContextWindow when the model is unknown.
func ContextWindow(model string) int {
	if n, ok := LookupContextWindow(model); ok {
		return n
	}
	return DefaultContextWindow
}

// MaxOutputTokens is a safe default for max_tokens when a request sets none:
// older models refuse values above their output limit.
func MaxOutputTokens(model string) int {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude-3-5"):
		return 8_192
	case strings.HasPrefix(m, "claude-3-7"):
		return 16_384
	case strings.HasPrefix(m, "claude-3"):
		return 4_096
	case strings.HasPrefix(m, "claude-"):
		return 16_384
	}
	return 8_192
}
