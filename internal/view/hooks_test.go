package view

import (
	"bytes"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/render"
)

func TestSinkShowsHookOutputAsItsOwnBlock(t *testing.T) {
	var out bytes.Buffer
	sink := New(render.New(render.Options{Out: &out}))
	sink.Handle(agent.Event{Kind: agent.TextDelta, Text: "The answer."})
	sink.Handle(agent.Event{Kind: agent.TurnEnd})
	sink.Handle(agent.Event{Kind: agent.HookProgress, Text: "[Skill] reviewing the session"})
	outs := []hooks.Output{{Hook: "skill-enhance", Text: "[Skill] Created: csv-report"}, {Hook: "Stop", Error: "exit 3"}}
	sink.Handle(agent.Event{Kind: agent.HookOutput, Hooks: outs, Text: hooks.Format(outs)})
	want := "The answer.\n[Skill] reviewing the session\n◆ hooks\n│ [Skill] Created: csv-report\n│ [Stop] failed: exit 3\n"
	if got := out.String(); got != want {
		t.Errorf("screen:\n%q\nwant\n%q", got, want)
	}
}
