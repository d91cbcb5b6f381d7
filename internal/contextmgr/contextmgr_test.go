package contextmgr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/llm"
)

func user(t string) llm.Message { return llm.Message{Role: llm.RoleUser, Text: t} }
func answer(t string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Text: t}
}
func calls(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: id, Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)})
	}
	return m
}
func result(id, text string) llm.Message {
	return llm.Message{Role: llm.RoleTool, ToolCallID: id, Text: text}
}

func TestCutKeepsToolPairsTogether(t *testing.T) {
	h := []llm.Message{user("u"), calls("a", "b"), result("a", "1"), result("b", "2"), calls("c"), result("c", "3"), answer("done")}
	tests := []struct {
		keep, want int
	}{
		{keep: 1, want: 6},  // just the answer
		{keep: 2, want: 6},  // would start at c's result: moves past it
		{keep: 3, want: 4},  // the c step whole
		{keep: 4, want: 4},  // would start at b's result: moves forward to the c step
		{keep: 6, want: 1},  // the a/b step whole
		{keep: 7, want: 0},  // everything: nothing to summarise
		{keep: 50, want: 0}, // more than there is
	}
	for _, tt := range tests {
		got := Cut(h, tt.keep)
		if got != tt.want {
			t.Errorf("Cut(keep %d) = %d, want %d", tt.keep, got, tt.want)
		}
		if got > 0 {
			c, _, err := Compacted("summary", h, got, -1)
			if err != nil || !ValidPairs(c) {
				t.Errorf("keep %d: compacted history invalid: %v %+v", tt.keep, err, c)
			}
		}
	}
	// The newest step alone is larger than keep: it stays whole.
	big := []llm.Message{user("u"), answer("x"), calls("a", "b", "c"), result("a", ""), result("b", ""), result("c", "")}
	if got := Cut(big, 2); got != 2 {
		t.Errorf("Cut of a large last step = %d, want 2", got)
	}
}

func TestValidPairs(t *testing.T) {
	tests := []struct {
		name string
		h    []llm.Message
		want bool
	}{
		{"whole steps", []llm.Message{user("u"), calls("a"), result("a", ""), answer("x")}, true},
		{"missing result", []llm.Message{user("u"), calls("a", "b"), result("a", ""), answer("x")}, false},
		{"orphan result", []llm.Message{user("u"), result("a", ""), answer("x")}, false},
		{"dangling at end", []llm.Message{user("u"), calls("a")}, false},
		{"summary first", []llm.Message{user(SummaryPrefix + "s"), calls("a"), result("a", "")}, true},
	}
	for _, tt := range tests {
		if got := ValidPairs(tt.h); got != tt.want {
			t.Errorf("%s: ValidPairs = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOffloadRestoreUnreferenced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "offloaded")
	big := strings.Repeat("line of output\n", 200)
	h := []llm.Message{user("u"), calls("a"), result("a", big), calls("b"), result("b", "short"),
		calls("c"), {Role: llm.RoleTool, ToolCallID: "c", Text: big, Images: []llm.Image{{MediaType: "image/png", Data: []byte("x")}}},
		calls("d"), result("d", big)}
	moved, err := Offload(h[:7], 0, dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 1 || moved[0].Index != 2 {
		t.Fatalf("moved = %+v, want only the large older result without images", moved)
	}
	if h[8].Text != big || h[6].Text != big || h[4].Text != "short" {
		t.Error("a recent, an image-carrying or a short result was touched")
	}
	p := PointerFile(h[2].Text)
	if p != moved[0].Path || !strings.HasPrefix(h[2].Text, OffloadPrefix) || strings.Count(h[2].Text, "\n") != 0 {
		t.Fatalf("pointer %q names %q, want one line naming %q", h[2].Text, p, moved[0].Path)
	}
	if !strings.Contains(h[2].Text, "read "+p) || !strings.Contains(h[2].Text, "200 lines") {
		t.Errorf("pointer does not say how to read it back: %q", h[2].Text)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != big {
		t.Fatalf("offloaded file: %v, %d bytes", err, len(data))
	}
	// Offloading again touches nothing already offloaded.
	if again, err := Offload(h[:7], 0, dir, 1000); err != nil || len(again) != 0 {
		t.Errorf("second offload moved %+v, %v", again, err)
	}
	if Count(h) != 1 {
		t.Errorf("Count = %d", Count(h))
	}
	// Expand puts the full text back (for the archive) without changing h.
	if r := Expand(dir)(h[2]); r.Text != big || !strings.HasPrefix(h[2].Text, OffloadPrefix) {
		t.Error("Expand did not restore a copy")
	}
	if r := Expand(t.TempDir())(h[2]); r.Text != h[2].Text {
		t.Error("Expand read a file outside its directory")
	}
	if u := Unreferenced(h, dir); len(u) != 0 {
		t.Errorf("unreferenced while referenced: %v", u)
	}
	if u := Unreferenced(h[3:], dir); len(u) != 1 || u[0] != p {
		t.Errorf("unreferenced after the pointer went = %v", u)
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name     string
		in       Settings
		window   int
		want     Settings
		wantWarn string
	}{
		{"model defaults", Settings{}, 200_000, Settings{Window: 200_000, OffloadAt: 120_000, CompactAt: 160_000}, ""},
		{"window set", Settings{Window: 100_000}, 200_000, Settings{Window: 100_000, OffloadAt: 60_000, CompactAt: 80_000}, ""},
		{"thresholds set", Settings{OffloadAt: 10_000, CompactAt: 20_000}, 128_000, Settings{Window: 128_000, OffloadAt: 10_000, CompactAt: 20_000}, ""},
		{"compact above window", Settings{Window: 50_000, CompactAt: 90_000}, 0, Settings{Window: 50_000, OffloadAt: 30_000, CompactAt: 40_000}, "above the context window"},
		{"offload above compact", Settings{OffloadAt: 190_000}, 200_000, Settings{Window: 200_000, OffloadAt: 120_000, CompactAt: 160_000}, "offload threshold"},
	}
	for _, tt := range tests {
		got, warn := tt.in.Resolve(tt.window)
		if got.Window != tt.want.Window || got.OffloadAt != tt.want.OffloadAt || got.CompactAt != tt.want.CompactAt {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		if (tt.wantWarn == "") != (warn == "") || !strings.Contains(warn, tt.wantWarn) {
			t.Errorf("%s: warning %q, want one containing %q", tt.name, warn, tt.wantWarn)
		}
		if got.Limit < got.CompactAt || got.Limit > got.Window || got.MinSaving != got.Window/10 {
			t.Errorf("%s: limit %d, minimum saving %d for %+v", tt.name, got.Limit, got.MinSaving, got)
		}
		if got.KeepRecent == 0 || got.CooldownSteps == 0 || got.OffloadMinChars == 0 {
			t.Errorf("%s: unset fields not defaulted: %+v", tt.name, got)
		}
	}
}

func TestTrackerMatchesAFullCount(t *testing.T) {
	var tr Tracker
	h := []llm.Message{user("hello"), calls("a"), result("a", strings.Repeat("x", 4000))}
	tr.Add(h...)
	full := 0
	for _, m := range h {
		full += Estimate(m)
	}
	if tr.Total() != full || tr.Len() != 3 {
		t.Fatalf("total %d len %d, want %d 3", tr.Total(), tr.Len(), full)
	}
	h[2].Text = "short"
	tr.Set(2, h[2])
	var again Tracker
	again.Reset(h)
	if tr.Total() != again.Total() {
		t.Errorf("after Set %d, recount %d", tr.Total(), again.Total())
	}
	if Estimate(result("a", strings.Repeat("x", 4000))) < 1000 {
		t.Error("4000 characters should estimate at about 1000 tokens")
	}
}

func TestSummaryRequestBounded(t *testing.T) {
	var h []llm.Message
	for i := 0; i < 200; i++ {
		h = append(h, calls("c"), result("c", strings.Repeat("y", 10_000)))
	}
	req := Summary{Model: "m", Older: append([]llm.Message{user("first request")}, h...), Prompt: -1, Instructions: "keep the file names", Budget: 20_000}.Request()
	text := req.Messages[0].Text
	if len(text) > 20_000*charsPerToken+2000 {
		t.Errorf("transcript is %d characters for a budget of 20000 tokens", len(text))
	}
	if !strings.Contains(text, "of output not shown") || !strings.HasSuffix(text, "keep the file names") {
		t.Error("transcript does not say what was left out, or lost the instructions")
	}
	for _, s := range []string{"## Technical context", "## Changes made", "## Errors and fixes", "## Current state", "## Pending tasks", "## User preferences", "## Key decisions"} {
		if !strings.Contains(req.System, s) {
			t.Errorf("summary prompt lacks %q", s)
		}
	}
}

// The user's current request is never summarised: before the cut it goes
// first, byte for byte, with the summary after it; after the cut it stays
// where it is. Either way tool pairs stay whole and its new index is known.
func TestCompactedKeepsTheCurrentRequest(t *testing.T) {
	prompt := "  Fix the build — keep “quotes”\n\ttabs and trailing spaces  "
	h := []llm.Message{user("old request"), answer("old answer"), user(prompt), calls("a"), result("a", "1"), calls("b"), result("b", "2"), calls("c"), result("c", "3")}
	if got := Summarised(h, 5, 2); len(got) != 4 || got[1].Text != "old answer" || got[2].ToolCalls[0].ID != "a" {
		t.Errorf("Summarised = %+v, want the cut part without the request", got)
	}
	c, p, err := Compacted("sum", h, 5, 2)
	if err != nil || p != 0 || c[0].Text != prompt || !strings.HasPrefix(c[1].Text, SummaryPrefix) || len(c) != 2+4 || !ValidPairs(c[2:]) {
		t.Fatalf("cut after the request: prompt at %d, %+v, %v", p, c, err)
	}
	c, p, err = Compacted("sum", h, 2, 2)
	if err != nil || p != 1 || c[1].Text != prompt || !strings.HasPrefix(c[0].Text, SummaryPrefix) || len(c) != 1+7 {
		t.Fatalf("cut before the request: prompt at %d, %+v, %v", p, c, err)
	}
	if _, _, err := Compacted("  ", h, 2, 2); err != ErrEmptySummary {
		t.Errorf("empty summary: %v", err)
	}
	req := Summary{Older: h[:5], Prompt: 2, Budget: 10_000}.Request()
	if !strings.Contains(req.Messages[0].Text, "USER (the current request; it is kept verbatim") {
		t.Error("the summariser is not told which request stays verbatim")
	}
}

// Shrink cuts the newest results, the largest first and the newest step's
// last, only as far as needed; each keeps its start and end and points at
// the file holding the whole text, which Expand and Unreferenced know.
func TestShrinkRecentResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "offloaded")
	lines := func(n int, tag string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%s line %d ✓\n", tag, i)
		}
		return b.String()
	}
	small, large, newest := lines(300, "small"), lines(900, "large"), lines(1500, "newest")
	h := []llm.Message{user("u"), calls("a", "b"), result("a", small), result("b", large), calls("c"), result("c", newest)}
	moved, saved, err := Shrink(h, 1, dir, 2000, 1)
	if err != nil || len(moved) != 1 || moved[0].Index != 3 || saved < Estimate(result("b", large))/2 {
		t.Fatalf("a small need: moved %+v saving %d, %v; want only the largest older one", moved, saved, err)
	}
	if h[2].Text != small || h[5].Text != newest {
		t.Error("Shrink cut more than it needed")
	}
	b := h[3].Text
	if PointerFile(b) != moved[0].Path || !strings.Contains(b, "large line 1 ✓\n") || !strings.HasSuffix(b, "large line 900 ✓\n") || !utf8.ValidString(b) {
		t.Errorf("cut result does not point at its file or lost its start or end:\n%s", b)
	}
	if data, _ := os.ReadFile(moved[0].Path); string(data) != large {
		t.Error("the file does not hold the whole result")
	}
	if Expand(dir)(h[3]).Text != large || len(Unreferenced(h, dir)) != 0 {
		t.Error("Expand or Unreferenced does not know a cut result")
	}
	// A need only the newest can meet: every other one goes first.
	moved, _, err = Shrink(h, 1, dir, 2000, 1_000_000)
	if err != nil || len(moved) != 2 || moved[0].Index != 2 || moved[1].Index != 5 {
		t.Fatalf("moved %+v, %v; want the small older one, then the newest", moved, err)
	}
	// Without a directory the result is cut and says the rest is gone.
	h2 := []llm.Message{user("u"), calls("c"), result("c", newest)}
	if moved, _, _ := Shrink(h2, 0, "", 2000, 1); len(moved) != 1 || !strings.Contains(h2[2].Text, "only its start and end are kept") || PointerFile(h2[2].Text) != "" {
		t.Errorf("cut without a directory: %q", h2[2].Text)
	}
}

// The summariser reads what offloaded results said, bounded so that every
// result fits the budget, not only the pointers.
func TestSummaryReadsOffloadedResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "offloaded")
	var h []llm.Message
	h = append(h, user("go"))
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("c%d", i)
		h = append(h, calls(id), result(id, fmt.Sprintf("result %d says FINDING-%d\n", i, i)+strings.Repeat("z", 20_000)))
	}
	if _, err := Offload(h, 0, dir, 1000); err != nil {
		t.Fatal(err)
	}
	req := Summary{Older: h, Prompt: 0, Budget: 20_000, Expand: Expand(dir)}.Request()
	text := req.Messages[0].Text
	for _, want := range []string{"FINDING-0", "FINDING-49", "offloaded to " + dir} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if len(text) > 20_000*charsPerToken+2000 || strings.Contains(text, "left out: it did not fit") {
		t.Errorf("transcript is %d characters (budget 80000) or dropped results", len(text))
	}
}

// A JSON result is offloaded as .json; a pointer whose file is gone expands
// to "[Content unavailable: …]"; only tool results are expanded.
func TestOffloadFilesAndExpansion(t *testing.T) {
	dir := t.TempDir()
	jsonText := `{"items": [` + strings.Repeat(`{"a": 1},`, 300) + `{"a": 2}]}`
	plain := strings.Repeat("log line\n", 300)
	h := []llm.Message{
		{Role: llm.RoleUser, Text: "go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "j"}, {ID: "p"}}},
		{Role: llm.RoleTool, ToolCallID: "j", Text: jsonText},
		{Role: llm.RoleTool, ToolCallID: "p", Text: plain},
		{Role: llm.RoleUser, Text: "next"},
	}
	moved, err := Offload(h[:4], 0, dir, 1000)
	if err != nil || len(moved) != 2 {
		t.Fatalf("offload: %+v, %v", moved, err)
	}
	for _, c := range []struct {
		i   int
		ext string
	}{{2, ".json"}, {3, ".txt"}} {
		if p := PointerFile(h[c.i].Text); filepath.Ext(p) != c.ext {
			t.Errorf("result %d offloaded to %q, want a %s file", c.i, p, c.ext)
		}
	}
	expand := Expand(dir)
	if got := expand(h[2]).Text; got != jsonText {
		t.Errorf("expanded JSON result differs (%d bytes)", len(got))
	}
	if err := os.Remove(PointerFile(h[3].Text)); err != nil {
		t.Fatal(err)
	}
	if got := expand(h[3]).Text; !strings.HasPrefix(got, "[Content unavailable: ") || !strings.Contains(got, PointerFile(h[3].Text)) {
		t.Errorf("a pointer to a removed file expands to %q", got)
	}
	// The same pointer text typed by the user (or quoted by the model) is
	// their words: never replaced.
	for _, role := range []llm.Role{llm.RoleUser, llm.RoleAssistant} {
		m := llm.Message{Role: role, Text: h[2].Text}
		if got := expand(m).Text; got != h[2].Text {
			t.Errorf("a %s message was expanded", role)
		}
	}
}
