package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/tool"
)

// userTexts joins the user-side texts of a request in order (Anthropic folds
// consecutive user content into one message, OpenAI keeps them apart).
func userTexts(r llmtest.Request) string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "user" && m.Text != "" {
			out = append(out, m.Text)
		}
	}
	return strings.Join(out, "\n")
}

// A run that ended without an answer (failed, or interrupted in another
// process and resumed) is explained to the model before the next prompt;
// a run that finished adds no note.
func TestUnfinishedRunNote(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format+"/failed request", func(t *testing.T) {
			p := newProvider(t, format, llmtest.ErrorTurn(400, "bad thing"), llmtest.TextTurn("first answer"), llmtest.TextTurn("second"))
			r, _ := newRunner(t, p, newTestTool(nil), nil)
			if _, err := r.Run(context.Background(), "one"); err == nil {
				t.Fatal("want the refused request's error")
			}
			if _, err := r.Run(context.Background(), "two"); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Run(context.Background(), "three"); err != nil {
				t.Fatal(err)
			}
			reqs := p.(wireProvider).srv.Requests()
			second, third := userTexts(reqs[1]), userTexts(reqs[2])
			i, j := strings.Index(second, "[The previous request stopped before it finished:"), strings.LastIndex(second, "two")
			if i < 0 || j < i || !strings.Contains(second, "bad thing") {
				t.Errorf("second request lacks the failure note before the prompt:\n%s", second)
			}
			if strings.Count(third, "[The previous request") != 1 {
				t.Errorf("a finished run must add no note; third request:\n%s", third)
			}
		})
		t.Run(format+"/resumed after an interrupt", func(t *testing.T) {
			dir := t.TempDir()
			p := newProvider(t, format, llmtest.BashTurn("t", "block"), llmtest.TextTurn("done"))
			ctx, cancel := context.WithCancel(context.Background())
			block := newTestTool(func(ctx context.Context, cmd string) tool.Result {
				cancel()
				<-ctx.Done()
				return tool.Result{Output: "interrupted", IsError: true}
			})
			r1, _ := newRunner(t, p, block, func(o *Options) { o.SessionsDir = dir })
			if _, err := r1.Run(ctx, "first"); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("err = %v, want interrupted", err)
			}
			if err := r1.Close(); err != nil {
				t.Fatal(err)
			}
			r2, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.SessionsDir = dir; o.ResumeID = "latest" })
			if _, err := r2.Run(context.Background(), "next"); err != nil {
				t.Fatal(err)
			}
			last, _ := p.(wireProvider).srv.LastRequest()
			got := userTexts(last)
			i, j := strings.Index(got, resumedUnfinishedNote), strings.LastIndex(got, "next")
			if i < 0 || j < i || strings.Index(got, "first") > i {
				t.Errorf("resumed request lacks the note between the prompts:\n%s", got)
			}
			// Persisted: a later resume sees the note in the history itself.
			h := loadSession(t, dir, r2.SessionID())
			found := false
			for _, m := range h {
				found = found || m.Text == resumedUnfinishedNote
			}
			if !found {
				t.Error("the note is not in the saved history")
			}
		})
	}
}
