package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestBadUsageExits2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"exec", "--bogus", "x"}, "unknown flag: --bogus"},
		{[]string{"nosuchcommand"}, `unknown command "nosuchcommand"`},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := Run(context.Background(), tt.args, IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tt.args, code, errb.String())
		}
		if !strings.Contains(errb.String(), tt.want) || !strings.Contains(errb.String(), "--help") {
			t.Errorf("%v: stderr %q lacks %q and a pointer to --help", tt.args, errb.String(), tt.want)
		}
	}
}
