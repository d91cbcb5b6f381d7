package cmdline

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"", nil},
		{"  a  b\tc ", []string{"a", "b", "c"}},
		{`'$(touch /tmp/pwned)'`, []string{"$(touch /tmp/pwned)"}},
		{`"$(touch /tmp/pwned)"`, []string{"$(touch /tmp/pwned)"}},
		{"`id`", []string{"`id`"}},
		{`"a \"b\" \$x \\ \n"`, []string{`a "b" $x \ \n`}},
		{`a\ b`, []string{"a b"}},
		{`''`, []string{""}},
		{`--x='{"a": 1}'`, []string{`--x={"a": 1}`}},
		{`pre"mid"'post'`, []string{"premidpost"}},
		{`~ $HOME *`, []string{"~", "$HOME", "*"}},
		{`tail\`, []string{`tail\`}},
		{"héllo wörld", []string{"héllo", "wörld"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.line)
		if err != nil {
			t.Fatalf("Split(%q): %v", tt.line, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestSplitUnclosed(t *testing.T) {
	for _, line := range []string{`"abc`, `'abc`, `a "b c`} {
		if _, err := Split(line); !errors.Is(err, ErrUnclosedQuote) {
			t.Errorf("Split(%q) err = %v, want ErrUnclosedQuote", line, err)
		}
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"plain", "", "a b", "it's", "$(x)", "`y`", `back\slash`, `{"a":1}`} {
		got, err := Split(Quote(s))
		if err != nil || len(got) != 1 || got[0] != s {
			t.Errorf("Split(Quote(%q)) = %q, %v", s, got, err)
		}
	}
}

func TestSplitArgsRefusesBareOperators(t *testing.T) {
	tests := []struct {
		line    string
		want    []string
		refused string
	}{
		{line: "a && b", refused: `"&&"`},
		{line: "a | b", refused: `"|"`},
		{line: "a > out", refused: `">"`},
		{line: "a ; b", refused: `";"`},
		{line: "a 2>&1", refused: `"2>&1"`},
		{line: "a &", refused: `"&"`},
		{line: `'&&' "|" \> ';'`, want: []string{"&&", "|", ">", ";"}},
		{line: "a>b x|y $(touch /tmp/p) `id`", want: []string{"a>b", "x|y", "$(touch", "/tmp/p)", "`id`"}},
	}
	for _, tt := range tests {
		got, err := SplitArgs(tt.line)
		if tt.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Errorf("SplitArgs(%q) = %q, %v; want a refusal naming %s", tt.line, got, err, tt.refused)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
	if _, err := SplitArgs(`a "b`); !errors.Is(err, ErrUnclosedQuote) {
		t.Errorf("unclosed quote: %v", err)
	}
}
