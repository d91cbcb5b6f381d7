package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// Sub-agents are guarded by the user's PreToolUse hooks like the parent,
// but run no stop hook: the Stop command hook runs once, after the
// parent's answer.
func TestSubagentsRunToolHooksButNoStopHooks(t *testing.T) {
	w := newWorld(t, nil)
	home := w.env["SYNAPSE_HOME"]
	stops := filepath.Join(t.TempDir(), "stops")
	settings := `{"hooks": {
		"PreToolUse": [{"matcher": "rm", "hooks": [{"type": "command", "command": "echo 'no rm' >&2; exit 2"}]}],
		"Stop": [{"hooks": [{"type": "command", "command": "echo stop >> ` + stops + `"}]}]}}`
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.proj, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if isSubagent(req) {
			if req.Turns() == 0 {
				return llmtest.BashTurn("s", "rm keep.txt")
			}
			if tr, _ := req.ToolResult("s-1"); strings.Contains(tr.Content, "no rm") {
				return llmtest.TextTurn("the hook refused rm")
			}
			return llmtest.TextTurn("rm ran")
		}
		if req.Turns() == 0 {
			return llmtest.BashTurn("p", `task:general -p "delete keep.txt" -d "delete"`)
		}
		return llmtest.TextTurn("parent done")
	})
	g := w.newAgent(t)
	res, err := g.Runner.Run(context.Background(), "clean up")
	if err != nil {
		t.Fatal(err)
	}
	last, _ := w.srv.LastRequest()
	if tr, _ := last.ToolResult("p-1"); !strings.Contains(tr.Content, "the hook refused rm") {
		t.Errorf("sub-agent result: %+v", tr)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "keep.txt")); err != nil {
		t.Error("the sub-agent's rm ran despite the PreToolUse hook")
	}
	data, _ := os.ReadFile(stops)
	if string(data) != "stop\n" || len(res.Hooks) != 0 {
		t.Errorf("Stop hook ran %q times (want once, for the parent); outputs %+v", data, res.Hooks)
	}
}
