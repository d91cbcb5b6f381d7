package web

import (
	"slices"
	"testing"
)

func TestPrivateTmp(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"after the read-only root",
			[]string{"bwrap", "--unshare-all", "--ro-bind", "/", "/", "--bind", "/tmp/d", "/tmp/d", "--", "prog"},
			[]string{"bwrap", "--unshare-all", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--bind", "/tmp/d", "/tmp/d", "--", "prog"}},
		{"unknown shape is left alone",
			[]string{"sandbox-exec", "-p", "(profile)", "prog"},
			[]string{"sandbox-exec", "-p", "(profile)", "prog"}},
		{"only options before the program count",
			[]string{"bwrap", "--", "prog", "--ro-bind", "/", "/"},
			[]string{"bwrap", "--", "prog", "--ro-bind", "/", "/"}},
	}
	for _, tt := range tests {
		if got := privateTmp(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("%s: privateTmp = %q, want %q", tt.name, got, tt.want)
		}
	}
}
