package llm

import "testing"

func TestClaudeNameAndSnapshot(t *testing.T) {
	for id, want := range map[string]string{
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":                                              "claude-sonnet-4-5-20250929",
		"global.anthropic.claude-opus-4-5-20251101-v1:0":                                            "claude-opus-4-5-20251101",
		"anthropic.claude-3-5-sonnet-20241022-v2:0":                                                 "claude-3-5-sonnet-20241022",
		"claude-sonnet-4-5@20250929":                                                                "claude-sonnet-4-5-20250929",
		"claude-3-5-sonnet-v2@20241022":                                                             "claude-3-5-sonnet-v2-20241022",
		"arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0": "claude-haiku-4-5-20251001",
		"claude-sonnet-4-5":                                                                         "claude-sonnet-4-5",
		"gpt-5":                                                                                     "gpt-5",
		"user@host-model":                                                                           "user@host-model",
	} {
		if got := ClaudeName(id); got != want {
			t.Errorf("ClaudeName(%q) = %q, want %q", id, got, want)
		}
	}
	for model, want := range map[string]string{
		"claude-sonnet-4-5": "claude-sonnet-4-5 20250929", "claude-opus-4-0": "claude-opus-4 20250514",
		"claude-haiku-4-5-20251001": "claude-haiku-4-5 20251001", "claude-future-9": "", "gpt-5": "",
	} {
		name, date, ok := ClaudeSnapshot(model)
		if got := name + " " + date; (want == "" && ok) || (want != "" && got != want) {
			t.Errorf("ClaudeSnapshot(%q) = %q, %q, %v; want %q", model, name, date, ok, want)
		}
	}
	// Limits follow the Claude model behind a platform id.
	if ContextWindow("us.anthropic.claude-sonnet-4-5-20250929-v1:0") != 200_000 || MaxOutputTokens("claude-3-5-haiku@20241022") != 8_192 {
		t.Error("a platform id does not get its Claude model's limits")
	}
}
