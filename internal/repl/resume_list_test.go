package repl

import (
	"strings"
	"testing"
	"time"
)

// /resume's list shows ids a user can type back (`/resume <id or prefix>`):
// real ids share their first 12 characters ("session-2026"), so a list cut
// there named every session alike. Counts read "1 message", "2 messages".
func TestResumeListShowsUsableIDs(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	sessions := fakeSessions{
		{ID: "session-20261121-110000-aaaaaa", Title: "first", MessageCount: 1, UpdatedAt: now.Add(-time.Hour)},
		{ID: "session-20261121-100000-bbbbbb", Title: "second", MessageCount: 4, UpdatedAt: now.Add(-2 * time.Hour)},
	}
	fa := &fakeAgent{model: "m1"}
	out, _ := runPiped(t, fa, "/resume\n\n", func(o *Options) {
		o.Sessions = sessions
		o.Now = func() time.Time { return now }
	})
	for _, w := range []string{
		"1. session-20261121-110000-aaaaaa  first  (1h ago, 1 message)",
		"2. session-20261121-100000-bbbbbb  second  (2h ago, 4 messages)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
