package acp

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestSlashCommandParse(t *testing.T) {
	for _, tc := range []struct {
		in, name, rest string
		ok             bool
	}{
		{"/skill:list", "skill:list", "", true},
		{"  /release-notes since v1.2\nmore", "release-notes", "since v1.2\nmore", true},
		{"/skill:info   pdf", "skill:info", "pdf", true},
		{"/", "", "", false},
		{"/ x", "", "", false},
		{"fix /usr/bin/foo", "", "", false},
		{"", "", "", false},
	} {
		name, rest, ok := slashCommand(tc.in)
		if name != tc.name || rest != tc.rest || ok != tc.ok {
			t.Errorf("slashCommand(%q) = %q, %q, %v; want %q, %q, %v", tc.in, name, rest, ok, tc.name, tc.rest, tc.ok)
		}
	}
}

// A skill's slash command becomes a prompt that has the model load the
// skill; the replay shows it as typed.
func TestSkillPromptRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, rest, typed string }{
		{"release-notes", "since v1.2", "/release-notes since v1.2"},
		{"pdf", "", "/pdf"},
		{"odd\"name", "two\n\nparagraphs]\n\nhere", "/odd\"name two\n\nparagraphs]\n\nhere"},
	} {
		p := skillPrompt(tc.name, tc.rest)
		if !strings.Contains(p, registry.SkillLoad+" "+tc.name) {
			t.Errorf("skillPrompt(%q) = %q: does not name the load command", tc.name, p)
		}
		if got := typedText(p); got != tc.typed {
			t.Errorf("typedText(skillPrompt(%q, %q)) = %q, want %q", tc.name, tc.rest, got, tc.typed)
		}
	}
	if got := typedText("plain words"); got != "plain words" {
		t.Errorf("typedText of plain text = %q", got)
	}
}

// Which commands a person may run: the registry's skill: and
// command:search families, not the model's file, shell or task commands.
func TestUserCommands(t *testing.T) {
	for _, c := range registry.All() {
		want := c.Family == registry.FamilySkill || c.Family == registry.FamilySearch
		if got := userCommand(c.Name) != ""; got != want {
			t.Errorf("userCommand(%q) offered = %v, want %v", c.Name, got, want)
		}
	}
	if userCommand("release-notes") != "" {
		t.Error("a skill name is taken for an Agent Shell command")
	}
}

// The answer naming a new session releases what waits for it, after it
// is written; other messages do not.
func TestAnswerWatch(t *testing.T) {
	buf := &lockedBuffer{}
	a := &answerWatch{w: buf}
	ran := make(chan string, 2)
	a.after("s-1", func() { ran <- "s-1:" + buf.String() })
	a.after("s-2", func() { ran <- "s-2" })
	a.forget("s-2")
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{}}}` + "\n",
		`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s-0"}}` + "\n",
		`{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s-1"}}` + "\n",
		`{"jsonrpc":"2.0","id":5,"result":{"sessionId":"s-2"}}` + "\n",
	} {
		if _, err := a.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	got := <-ran
	if !strings.HasPrefix(got, "s-1:") || !strings.Contains(got, `"id":4`) {
		t.Errorf("the hook ran as %q: want after the answer of s-1 was written", got)
	}
	select {
	case g := <-ran:
		t.Errorf("a forgotten hook ran: %s", g)
	default:
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The slash commands reach the client with a new session: the commands a
// person may run and the installed skills; /skill:list runs without the
// model and shows its output; /<skill> asks the model to load the skill;
// a turn ends with a usage_update.
func TestSlashCommandsAndUsage(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.TextTurn("loaded it"))
	testutil.WriteFile(t, filepath.Join(w.env["SYNAPSE_HOME"], "skills", "release-notes", "SKILL.md"),
		"---\nname: release-notes\ndescription: Write release notes from the git log.\n---\n\n# Release notes\n")
	var mu sync.Mutex
	var cmds []sdk.AvailableCommand
	w.cl.onUpdate = func(u sdk.SessionUpdate) {
		if c := u.AvailableCommandsUpdate; c != nil {
			mu.Lock()
			cmds = c.AvailableCommands
			mu.Unlock()
		}
	}
	id := w.newSession(t)
	mu.Lock()
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	mu.Unlock()
	for _, want := range []string{registry.SkillList, registry.SkillInfo, registry.CommandSearch, "release-notes"} {
		if !slices.Contains(names, want) {
			t.Errorf("available commands %v lack %q", names, want)
		}
	}

	if res := w.prompt(t, id, "/"+registry.SkillList); res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("/%s answered %q", registry.SkillList, res.StopReason)
	}
	var text strings.Builder
	for _, u := range w.cl.snapshot() {
		if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil {
			text.WriteString(m.Content.Text.Text)
		}
	}
	if !strings.Contains(text.String(), "release-notes") {
		t.Errorf("/%s showed %q, want the installed skills", registry.SkillList, text.String())
	}
	if n := len(w.srv.Requests()); n != 0 {
		t.Errorf("/%s asked the model (%d requests)", registry.SkillList, n)
	}

	w.cl.reset()
	w.prompt(t, id, "/release-notes since v1.2")
	reqs := w.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].LastUserText(), registry.SkillLoad+" release-notes") || !strings.Contains(reqs[0].LastUserText(), "since v1.2") {
		t.Fatalf("the skill's slash command reached the model as %q", reqs[len(reqs)-1].LastUserText())
	}
	var usage *sdk.SessionUsageUpdate
	for _, u := range w.cl.snapshot() {
		if u.UsageUpdate != nil {
			usage = u.UsageUpdate
		}
	}
	if usage == nil || usage.Used <= 0 || usage.Size <= usage.Used || usage.Cost == nil || usage.Cost.Amount <= 0 || usage.Cost.Currency != "USD" {
		t.Errorf("usage_update after the turn: %+v", usage)
	}
}
