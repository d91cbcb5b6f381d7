package render

import "testing"

func TestHighlight(t *testing.T) {
	tests := []struct {
		lang, line, want string
	}{
		{"go", `return f("a\"b") // x`, sgrKeyword + "return" + sgrReset + " " + sgrCall + "f" + sgrReset + "(" + sgrString + `"a\"b"` + sgrReset + ") " + sgrComment + "// x" + sgrReset},
		{"Python", "x = 42 # n", "x = " + sgrNumber + "42" + sgrReset + " " + sgrComment + "# n" + sgrReset},
		{"sh", "echo 'it''s'", "echo " + sgrString + "'it'" + sgrReset + sgrString + "'s'" + sgrReset},
		{"c", "int /* a */ b;", sgrKeyword + "int" + sgrReset + " " + sgrComment + "/* a */" + sgrReset + " b;"},
		{"js", `s = "open`, "s = " + sgrString + `"open` + sgrReset},
		{"diff", "+added", sgrAdded + "+added" + sgrReset},
		{"diff", "-gone", sgrRemoved + "-gone" + sgrReset},
		{"sql", "SELECT café FROM t", sgrKeyword + "SELECT" + sgrReset + " café " + sgrKeyword + "FROM" + sgrReset + " t"},
	}
	for _, tt := range tests {
		l := langFor(tt.lang)
		if l == nil {
			t.Fatalf("no language %q", tt.lang)
		}
		if got := l.colour(tt.line); got != tt.want {
			t.Errorf("%s %q:\n got %q\nwant %q", tt.lang, tt.line, got, tt.want)
		}
	}
	if langFor("no-such-language") != nil {
		t.Error("an unknown language has a highlighter")
	}
}
