package config

import (
	"github.com/synapse-agent/synapse/internal/testutil"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPositiveInt(t *testing.T) {
	tests := []struct {
		val  string
		want int
	}{
		{"", 5}, {"3", 3}, {"0", 5}, {"-2", 5}, {"abc", 5}, {"2.5", 5}, {"12", 12},
	}
	for _, tt := range tests {
		got := PositiveInt(testutil.MapEnv(map[string]string{"X": tt.val}), "X", 5)
		if got != tt.want {
			t.Errorf("PositiveInt(%q) = %d, want %d", tt.val, got, tt.want)
		}
	}
}

func TestLoadPaths(t *testing.T) {
	c, err := Load(testutil.MapEnv(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != "/h/.synapse" || c.SessionsDir != "/h/.synapse/sessions" || c.SkillsDir != "/h/.synapse/skills" || c.LogsDir != "/h/.synapse/logs" {
		t.Fatalf("unexpected paths: %+v", c)
	}
	c, err = Load(testutil.MapEnv(map[string]string{"HOME": "/h", "SYNAPSE_HOME": "~/syn", "SYNAPSE_SESSIONS_DIR": "/s", "SYNAPSE_COMMAND_TIMEOUT": "1500", "SYNAPSE_MCP_START_TIMEOUT": "60000"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != "/h/syn" || c.SessionsDir != "/s" || c.SandboxPath() != filepath.Join("/h/syn", "sandbox.json") {
		t.Fatalf("unexpected paths: %+v", c)
	}
	if c.MCPStartTimeout != time.Minute {
		t.Fatalf("MCP start timeout = %v", c.MCPStartTimeout)
	}
	if c.CommandTimeout != 1500*time.Millisecond {
		t.Fatalf("timeout = %v", c.CommandTimeout)
	}
}

func TestExpandHome(t *testing.T) {
	for in, want := range map[string]string{"~": "/h", "~/x.txt": "/h/x.txt", "/a/~": "/a/~", "~x": "~x", "rel": "rel"} {
		if got := ExpandHome(in, "/h"); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSkillKnobs(t *testing.T) {
	c, _ := Load(testutil.MapEnv(map[string]string{"HOME": "/h"}))
	if c.SkillMaxVersions != 20 || c.SkillSubagentTimeout != 5*time.Minute {
		t.Errorf("defaults: %d %v", c.SkillMaxVersions, c.SkillSubagentTimeout)
	}
	c, _ = Load(testutil.MapEnv(map[string]string{"HOME": "/h", "SYNAPSE_SKILL_MAX_VERSIONS": "7", "SYNAPSE_SKILL_SUBAGENT_TIMEOUT": "2500"}))
	if c.SkillMaxVersions != 7 || c.SkillSubagentTimeout != 2500*time.Millisecond {
		t.Errorf("overrides: %d %v", c.SkillMaxVersions, c.SkillSubagentTimeout)
	}
}

// The skill-enhance transcript's bounds: defaults, overrides, and a bad value
// falls back to the default with a warning naming it.
func TestEnhanceTranscriptKnobs(t *testing.T) {
	c, _ := Load(testutil.MapEnv(map[string]string{"HOME": "/h"}))
	if c.MaxEnhanceContextChars != 16000 || c.ToolResultSummaryLimit != 600 || len(c.Warnings) != 0 {
		t.Errorf("defaults: %d %d %q", c.MaxEnhanceContextChars, c.ToolResultSummaryLimit, c.Warnings)
	}
	c, _ = Load(testutil.MapEnv(map[string]string{"HOME": "/h", "SYNAPSE_MAX_ENHANCE_CONTEXT_CHARS": "8000", "SYNAPSE_TOOL_RESULT_SUMMARY_LIMIT": "300"}))
	if c.MaxEnhanceContextChars != 8000 || c.ToolResultSummaryLimit != 300 {
		t.Errorf("overrides: %d %d", c.MaxEnhanceContextChars, c.ToolResultSummaryLimit)
	}
	c, _ = Load(testutil.MapEnv(map[string]string{"HOME": "/h", "SYNAPSE_MAX_ENHANCE_CONTEXT_CHARS": "lots", "SYNAPSE_TOOL_RESULT_SUMMARY_LIMIT": "0"}))
	if c.MaxEnhanceContextChars != 16000 || c.ToolResultSummaryLimit != 600 || len(c.Warnings) != 2 ||
		!strings.Contains(c.Warnings[0], `SYNAPSE_MAX_ENHANCE_CONTEXT_CHARS="lots"`) || !strings.Contains(c.Warnings[1], "using the default, 600") {
		t.Errorf("bad values: %d %d %q", c.MaxEnhanceContextChars, c.ToolResultSummaryLimit, c.Warnings)
	}
}

func TestMaxRoundsKept(t *testing.T) {
	for _, tc := range []struct {
		val      string
		want     int
		warnings int
	}{{"", 100, 0}, {"7", 7, 0}, {"none", 100, 1}, {"-3", 100, 1}} {
		env := map[string]string{"HOME": "/h"}
		if tc.val != "" {
			env["SYNAPSE_MAX_ROUNDS_KEPT"] = tc.val
		}
		c, _ := Load(testutil.MapEnv(env))
		if c.MaxRoundsKept != tc.want || len(c.Warnings) != tc.warnings {
			t.Errorf("SYNAPSE_MAX_ROUNDS_KEPT=%q: %d, warnings %q", tc.val, c.MaxRoundsKept, c.Warnings)
		}
	}
}
