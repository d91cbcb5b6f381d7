package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// officialRun is what testdata/npm/acpclient/client.mjs prints.
type officialRun struct {
	SessionID   string           `json:"sessionId"`
	LoadSession bool             `json:"loadSession"`
	StopReasons []string         `json:"stopReasons"`
	Live        []officialUpdate `json:"live"`
	Load        []officialUpdate `json:"load"`
}

// officialUpdate is one session/update as the official client parsed it.
type officialUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Status        string          `json:"status"`
	Content       json.RawMessage `json:"content"`
	RawOutput     map[string]any  `json:"rawOutput"`
	Used          *int            `json:"used"`
	Size          *int            `json:"size"`
	Cost          *struct {
		Amount   float64 `json:"amount"`
		Currency string  `json:"currency"`
	} `json:"cost"`
	AvailableCommands []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"availableCommands"`
}

// ends are a call's updates that carry a final status.
func ends(ups []officialUpdate, id string) []officialUpdate {
	var out []officialUpdate
	for _, u := range ups {
		if u.SessionUpdate == "tool_call_update" && u.ToolCallID == id && (u.Status == "completed" || u.Status == "failed") {
			out = append(out, u)
		}
	}
	return out
}

// hasDiff reports whether an update's content has the diff of path from
// old to new text.
func hasDiff(u officialUpdate, path, oldText, newText string) bool {
	var content []struct {
		Type    string  `json:"type"`
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}
	_ = json.Unmarshal(u.Content, &content)
	for _, c := range content {
		if c.Type == "diff" && c.Path == path && c.OldText != nil && *c.OldText == oldText && c.NewText == newText {
			return true
		}
	}
	return false
}

// The official TypeScript client (@agentclientprotocol/sdk) drives the
// built binary as an editor: an edit, a command cancelled while it runs,
// then session/load from a second process. The editor gets usage_update
// (context used against the window, cost) after each turn and
// available_commands_update (the skill: and command:search commands, the
// installed skills); the cancelled command's output has no bash "Killed"
// job report; the load replays the edit's diff and the cancelled call as
// they were sent live.
func TestACPOfficialClient(t *testing.T) {
	testutil.RequireBwrap(t)
	nm := testutil.NodeModules(t, "acpclient", "@agentclientprotocol/sdk")
	srv := llmtest.New(t,
		llmtest.BashTurn("e", "edit greeting.txt hello goodbye"), llmtest.TextTurn("fixed"),
		llmtest.BashTurn("w", "echo started >&2; echo out-line; sleep 30"), llmtest.TextTurn("never"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	greeting := filepath.Join(e.dir, "greeting.txt")
	testutil.WriteFile(t, greeting, "hello world\n")
	testutil.WriteFile(t, filepath.Join(e.home, "skills", "release-notes", "SKILL.md"),
		"---\nname: release-notes\ndescription: Write release notes from the git log.\n---\n\n# Release notes\n")

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(filepath.Dir(nm), "client.mjs"), synapseBin, e.dir)
	cmd.Dir, cmd.Env = e.dir, e.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var run officialRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatalf("client output is not JSON: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("synapse stderr:\n%s", stderr.String())
	if !run.LoadSession || run.SessionID == "" || !slices.Equal(run.StopReasons, []string{"end_turn", "cancelled"}) {
		t.Fatalf("loadSession %v, session %q, stop reasons %v: want end_turn then cancelled", run.LoadSession, run.SessionID, run.StopReasons)
	}

	// usage_update: one with the greeting and one after each turn, the
	// context growing, within the window, and a cost (the model is priced).
	var usage []officialUpdate
	for _, u := range run.Live {
		if u.SessionUpdate == "usage_update" {
			usage = append(usage, u)
		}
	}
	if len(usage) != 3 {
		t.Fatalf("%d usage_update in the live run, want 3 (the new session's, one per turn): %+v", len(usage), usage)
	}
	for i, u := range usage {
		if u.Used == nil || u.Size == nil || *u.Used <= 0 || *u.Size < 100_000 || *u.Used >= *u.Size {
			t.Errorf("usage_update %d: used %v of size %v, want a positive use within a window of the model's size", i, u.Used, u.Size)
		}
	}
	if *usage[1].Used <= *usage[0].Used {
		t.Errorf("the context did not grow over the first turn: %d then %d", *usage[0].Used, *usage[1].Used)
	}
	if c := usage[2].Cost; c == nil || c.Currency != "USD" || c.Amount <= 0 {
		t.Errorf("the last usage_update's cost is %+v, want a positive USD amount", c)
	} else if c0 := usage[1].Cost; c0 == nil || c0.Amount > c.Amount {
		t.Errorf("the cost went down or went missing: %+v then %+v", c0, c)
	}

	// available_commands_update: the Agent Shell commands a person may
	// run (as the REPL's /skill:<command>) and the installed skills.
	var commands []string
	for _, u := range run.Live {
		if u.SessionUpdate == "available_commands_update" {
			commands = nil
			for _, c := range u.AvailableCommands {
				if c.Description == "" {
					t.Errorf("command %q has no description", c.Name)
				}
				commands = append(commands, c.Name)
			}
		}
	}
	for _, want := range append(registry.Names(registry.FamilySkill), registry.CommandSearch, "release-notes", "synapse-skill-creator") {
		if !slices.Contains(commands, want) {
			t.Errorf("available commands %v lack %q", commands, want)
		}
	}
	for _, not := range []string{registry.Read, registry.Edit, registry.TaskGeneral} {
		if slices.Contains(commands, not) {
			t.Errorf("available commands %v offer %q, a command of the model's", commands, not)
		}
	}

	// Live: the edit completed with its diff; the cancelled command failed
	// with its own lines and no job noise.
	edit := ends(run.Live, "e-1")
	if len(edit) != 1 || edit[0].Status != "completed" || !hasDiff(edit[0], greeting, "hello world\n", "goodbye world\n") {
		t.Fatalf("the edit's end, live: %+v", edit)
	}
	wait := ends(run.Live, "w-1")
	if len(wait) != 1 || wait[0].Status != "failed" || wait[0].RawOutput["status"] != "cancelled" {
		t.Fatalf("the cancelled command's end, live: %+v", wait)
	}
	var liveText strings.Builder
	for _, u := range run.Live {
		if u.ToolCallID == "w-1" {
			liveText.Write(u.Content)
		}
	}
	if s := liveText.String(); !strings.Contains(s, "started") || strings.Contains(s, "Killed") {
		t.Errorf("the cancelled command's content, live: %s\nwant its own lines without bash's Killed job report", s)
	}

	// session/load: the same ends, as they happened.
	liveEdit, liveWait := edit[0], wait[0]
	edit = ends(run.Load, "e-1")
	if len(edit) != 1 || edit[0].Status != "completed" || !hasDiff(edit[0], greeting, "hello world\n", "goodbye world\n") {
		t.Errorf("the edit's end, replayed: %+v; want completed with its diff", edit)
	}
	wait = ends(run.Load, "w-1")
	if len(wait) != 1 || wait[0].Status != "failed" || wait[0].RawOutput["status"] != "cancelled" {
		t.Fatalf("the cancelled command's end, replayed: %+v; want failed, status cancelled", wait)
	}
	if s := string(wait[0].Content); !strings.Contains(s, "started") || !strings.Contains(s, "cancelled") || strings.Contains(s, "Killed") {
		t.Errorf("the cancelled command's content, replayed: %s\nwant its own lines and why it ended, no job noise", s)
	}
	for _, c := range []struct{ live, replayed officialUpdate }{{liveEdit, edit[0]}, {liveWait, wait[0]}} {
		if string(c.live.Content) != string(c.replayed.Content) {
			t.Errorf("call %s replays with other content than it was shown live:\nlive:     %s\nreplayed: %s", c.live.ToolCallID, c.live.Content, c.replayed.Content)
		}
	}
	for _, u := range run.Load {
		if u.SessionUpdate == "user_message_chunk" && strings.Contains(string(u.Content), "interrupted") {
			t.Errorf("the replay shows the agent's interruption note as the user's words: %s", u.Content)
		}
	}
	var loadUsage bool
	for _, u := range run.Load {
		loadUsage = loadUsage || (u.SessionUpdate == "usage_update" && u.Used != nil && *u.Used > 0)
	}
	if !loadUsage {
		t.Errorf("session/load sent no usage_update")
	}
}
