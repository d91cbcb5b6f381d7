package textutil

import (
	"fmt"
	"strings"
	"testing"
)

func TestFirstLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"  one  \ntwo", "one"},
		{"\n\n  first real line\nsecond", "first real line"},
		{"héllo\r\nworld", "héllo"},
	}
	for _, tt := range tests {
		if got := FirstLine(tt.in); got != tt.want {
			t.Errorf("FirstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 10, "eleven ru…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"anything", 0, "anything"},
		{"anything", -1, "anything"},
	}
	for _, tt := range tests {
		got := Truncate(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if tt.max > 0 && len([]rune(got)) > tt.max {
			t.Errorf("Truncate(%q, %d) is %d runes long", tt.in, tt.max, len([]rune(got)))
		}
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789", 10, "0123456789"},
		{"0123456789abc", 10, "0123456789…"},
		{"ünïcödé", 3, "ünï…"},
	}
	for _, tt := range tests {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"Convert PDFs.\nLonger text follows.", 72, "Convert PDFs."},
		{"  padded  ", 72, "padded"},
		{"a description that is long", 12, "a descripti…"},
		{"cut at a space here", 10, "cut at a…"},
		{"whole line kept", 0, "whole line kept"},
	}
	for _, tt := range tests {
		got := OneLine(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if tt.max > 0 && len([]rune(got)) > tt.max {
			t.Errorf("OneLine(%q, %d) is %d runes long", tt.in, tt.max, len([]rune(got)))
		}
	}
}

// One note marks every cut of output to a byte bound.
func TestCutNote(t *testing.T) {
	if got, want := CutNote(4000), "[… 4000 bytes of output not shown]"; got != want {
		t.Errorf("CutNote(4000) = %q, want %q", got, want)
	}
}

// Byte bounds never split a UTF-8 sequence.
func TestHeadTailBytes(t *testing.T) {
	s := "aé€b" // 1 + 2 + 3 + 1 bytes
	for _, tt := range []struct {
		n          int
		head, tail string
	}{
		{0, "", ""}, {1, "a", "b"}, {2, "a", "b"}, {3, "aé", "b"}, {4, "aé", "€b"}, {6, "aé€", "é€b"}, {7, s, s}, {9, s, s},
	} {
		if got := HeadBytes(s, tt.n); got != tt.head {
			t.Errorf("HeadBytes(%d) = %q, want %q", tt.n, got, tt.head)
		}
		if got := TailBytes(s, tt.n); got != tt.tail {
			t.Errorf("TailBytes(%d) = %q, want %q", tt.n, got, tt.tail)
		}
	}
}

func TestFirstLines(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"a\nb", 2, "a\nb"},
		{"a\nb\nc", 2, "a\nb\n" + Ellipsis},
		{"", 1, ""},
	} {
		if got := FirstLines(tt.s, tt.n); got != tt.want {
			t.Errorf("FirstLines(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestKeepEnds(t *testing.T) {
	short := "one\ntwo\n"
	if got := KeepEnds(short, 100); got != short {
		t.Errorf("a text within the bound changed: %q", got)
	}
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("line %02d", i))
	}
	long := strings.Join(lines, "\n")
	got := KeepEnds(long, 90)
	head, tail := Ends(long, 90)
	if !strings.HasPrefix(got, "line 00\n") || !strings.HasSuffix(got, "line 99") ||
		!strings.Contains(got, CutNote(int64(len(long)-len(head)-len(tail)))) {
		t.Errorf("KeepEnds kept %q", got)
	}
	if !strings.HasSuffix(head, "\n") || strings.HasPrefix(tail, "ine") || len(head)+len(tail) > 90 {
		t.Errorf("Ends cut inside a line or past the bound: head %q tail %q", head, tail)
	}
	if h, _ := Ends("ééééé", 4); h != "" && h != "é" {
		t.Errorf("Ends cut inside a UTF-8 sequence: %q", h)
	}
}
