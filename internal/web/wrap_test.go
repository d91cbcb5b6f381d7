package web

import (
	"slices"
	"testing"
)

func TestPrivateTmp(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		keep []string
		want []string
	}{
		{"after the read-only root",
			[]string{"bwrap", "--unshare-all", "--ro-bind", "/", "/", "--bind", "/tmp/d", "/tmp/d", "--", "prog"},
			nil,
			[]string{"bwrap", "--unshare-all", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--bind", "/tmp/d", "/tmp/d", "--", "prog"}},
		{"an engine under /tmp is bound back",
			[]string{"bwrap", "--ro-bind", "/", "/", "--", "/tmp/x/bin/codex"},
			[]string{"/tmp/x/bin"},
			[]string{"bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--ro-bind", "/tmp/x/bin", "/tmp/x/bin", "--", "/tmp/x/bin/codex"}},
		{"unknown shape is left alone",
			[]string{"sandbox-exec", "-p", "(profile)", "prog"},
			nil,
			[]string{"sandbox-exec", "-p", "(profile)", "prog"}},
		{"only options before the program count",
			[]string{"bwrap", "--", "prog", "--ro-bind", "/", "/"},
			nil,
			[]string{"bwrap", "--", "prog", "--ro-bind", "/", "/"}},
	}
	for _, tt := range tests {
		if got := privateTmp(tt.in, tt.keep...); !slices.Equal(got, tt.want) {
			t.Errorf("%s: privateTmp = %q, want %q", tt.name, got, tt.want)
		}
	}
}
