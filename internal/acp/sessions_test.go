package acp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	sessions "github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// session/resume in a new connection continues the saved conversation
// without replaying it; the capability is advertised.
func TestResumeSession(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.TextTurn("Noted: blue."), llmtest.TextTurn("It was blue."))
	sc := w.init.AgentCapabilities.SessionCapabilities
	if sc.Resume == nil || sc.List == nil || sc.Close == nil {
		t.Errorf("sessionCapabilities = %+v, want resume, list and close", sc)
	}
	id := w.newSession(t)
	w.prompt(t, id, "remember: blue")

	w.cl = &client{}
	w.connect(t)
	res, err := w.conn.ResumeSession(context.Background(), sdk.ResumeSessionRequest{SessionId: id, Cwd: w.proj})
	if err != nil {
		t.Fatal(err)
	}
	if res.Modes == nil || res.Modes.CurrentModeId != "default" {
		t.Errorf("resume modes = %+v", res.Modes)
	}
	// The greeting only (slash commands, usage): no replay.
	for _, u := range w.cl.snapshot() {
		if u.AvailableCommandsUpdate == nil && u.UsageUpdate == nil {
			t.Errorf("resume sent %+v; only session/load replays", u)
		}
	}
	w.prompt(t, id, "which colour?")
	if req := w.srv.Requests()[1]; !strings.Contains(req.FirstUserText(), "remember: blue") {
		t.Errorf("the resumed session did not send the earlier conversation: %+v", req.Messages)
	}
	if _, err := w.conn.ResumeSession(context.Background(), sdk.ResumeSessionRequest{SessionId: "session-nope", Cwd: w.proj}); err == nil || !strings.Contains(err.Error(), "session-nope") {
		t.Errorf("resuming an unknown session: %v", err)
	}
}

// session/list lists the saved sessions, most recent first, narrowed to a
// directory when asked, a page at a time.
func TestListSessions(t *testing.T) {
	w := newWorld(t)
	a := filepath.Join(w.base, "a")
	b := filepath.Join(w.base, "b")
	store := &sessions.Store{Dir: filepath.Join(w.env["SYNAPSE_HOME"], "sessions")}
	want := map[string]string{} // id → cwd
	for i := range listPage + 5 {
		cwd := a
		if i%10 == 0 {
			cwd = b
		}
		s := store.Create(cwd)
		s.SetTitle("task " + cwd)
		if err := s.Append(llm.Message{Role: llm.RoleUser, Text: "task " + cwd}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		want[s.ID()] = cwd
	}
	list := func(cwd, cursor string) sdk.ListSessionsResponse {
		t.Helper()
		req := sdk.ListSessionsRequest{}
		if cwd != "" {
			req.Cwd = &cwd
		}
		if cursor != "" {
			req.Cursor = &cursor
		}
		res, err := w.conn.ListSessions(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	onlyB := list(b, "")
	if len(onlyB.Sessions) != 6 || onlyB.NextCursor != nil {
		t.Fatalf("sessions in b: %d, next %v; want 6 on one page", len(onlyB.Sessions), onlyB.NextCursor)
	}
	for _, s := range onlyB.Sessions {
		if s.Cwd != b || want[string(s.SessionId)] != b || s.Title == nil || *s.Title != "task "+b || s.UpdatedAt == nil {
			t.Errorf("listed %+v", s)
		}
	}
	first := list("", "")
	if len(first.Sessions) != listPage || first.NextCursor == nil {
		t.Fatalf("first page: %d sessions, next %v", len(first.Sessions), first.NextCursor)
	}
	second := list("", *first.NextCursor)
	if len(second.Sessions) != 5 || second.NextCursor != nil {
		t.Fatalf("second page: %d sessions, next %v", len(second.Sessions), second.NextCursor)
	}
	seen := map[string]bool{}
	for _, s := range append(first.Sessions, second.Sessions...) {
		seen[string(s.SessionId)] = true
	}
	if len(seen) != len(want) {
		t.Errorf("the pages list %d distinct sessions of %d", len(seen), len(want))
	}
	if _, err := w.conn.ListSessions(context.Background(), sdk.ListSessionsRequest{Cursor: sdk.Ptr("x")}); err == nil || !strings.Contains(err.Error(), "nextCursor") {
		t.Errorf("bad cursor: %v", err)
	}
}

// A replayed prompt is what the person sent, whatever wrapped it.
func TestTypedText(t *testing.T) {
	note := modeNotePrefix + "default: plan mode has ended and the workspace is writable again.]\n\n"
	for _, in := range []string{
		"fix it",
		tool.PlanPrompt("fix it"),
		agent.WrapSkillSearch("fix it"),
		agent.WrapSkillSearch(tool.PlanPrompt("fix it")),
		agent.WrapSkillSearch(note + "fix it"),
	} {
		if got := typedText(in); got != "fix it" {
			t.Errorf("typedText(%q) = %q", in, got)
		}
	}
}

// A session loaded by one agent (an editor) is refused to another, with
// the holder's pid and what to do, until the first goes away (issue 23).
func TestLoadOfASessionOpenElsewhereIsRefused(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.TextTurn("Noted."))
	id := w.newSession(t)
	w.prompt(t, id, "remember this")

	other := &world{srv: w.srv, proj: w.proj, base: w.base, cl: &client{}, env: w.env}
	other.connect(t)
	_, err := other.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: w.proj, McpServers: []sdk.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "is open in another Synapse process (pid") || !strings.Contains(err.Error(), "close it there") {
		t.Fatalf("load while open elsewhere: %v", err)
	}
	w.hangUp()
	<-w.served
	if _, err := other.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: w.proj, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("load after the first agent ended: %v", err)
	}
}
