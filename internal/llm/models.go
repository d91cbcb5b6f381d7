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
	m := strings.ToLower(ClaudeName(model))
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
	m := strings.ToLower(ClaudeName(model))
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

// claudeSnapshots names the dated snapshot of each current Claude alias: the
// cloud platforms know Claude models by snapshot (Amazon Bedrock
// "anthropic.claude-sonnet-4-5-20250929-v1:0", Google Vertex AI
// "claude-sonnet-4-5@20250929").
var claudeSnapshots = map[string]string{
	"claude-opus-4-5":   "claude-opus-4-5-20251101",
	"claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
	"claude-haiku-4-5":  "claude-haiku-4-5-20251001",
	"claude-opus-4-1":   "claude-opus-4-1-20250805",
	"claude-opus-4":     "claude-opus-4-20250514",
	"claude-opus-4-0":   "claude-opus-4-20250514",
	"claude-sonnet-4":   "claude-sonnet-4-20250514",
	"claude-sonnet-4-0": "claude-sonnet-4-20250514",
	"claude-3-7-sonnet": "claude-3-7-sonnet-20250219",
	"claude-3-5-haiku":  "claude-3-5-haiku-20241022",
	"claude-3-haiku":    "claude-3-haiku-20240307",
}

// ClaudeSnapshot returns the dated snapshot of a Claude model name and
// splits it into the name without the date and the date
// ("claude-sonnet-4-5" → "claude-sonnet-4-5", "20250929"). A name that ends
// in a date already is split as it is; ok is false for any other name.
func ClaudeSnapshot(model string) (name, date string, ok bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if s, found := claudeSnapshots[m]; found {
		m = s
	}
	i := strings.LastIndexByte(m, '-')
	if !strings.HasPrefix(m, "claude-") || i < 0 || !isDate(m[i+1:]) {
		return "", "", false
	}
	return m[:i], m[i+1:], true
}

func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ClaudeName is the Anthropic name of a cloud platform's Claude model id, for
// prices and limits: Amazon Bedrock's "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
// (also as the last part of an ARN) and Google Vertex AI's
// "claude-sonnet-4-5@20250929" are "claude-sonnet-4-5-20250929". Any other
// name is returned unchanged.
func ClaudeName(id string) string {
	m := id
	if i := strings.LastIndexByte(m, '/'); i >= 0 && strings.HasPrefix(m, "arn:") {
		m = m[i+1:]
	}
	if i := strings.Index(m, "anthropic.claude"); i >= 0 {
		m = m[i+len("anthropic."):]
		// The version suffix: "-v1:0", "-v2:0".
		if j := strings.LastIndex(m, "-v"); j > 0 && strings.Contains(m[j:], ":") {
			m = m[:j]
		}
		return m
	}
	if strings.HasPrefix(m, "claude") && strings.Contains(m, "@") {
		return strings.Replace(m, "@", "-", 1)
	}
	return id
}
