package cmdline

import (
	"errors"
	"reflect"
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
