package tool

import "testing"

// TestRestrictedSeesTheRoutedCommand: the router splits the command word at
// any Unicode space (a no-break space, an ideographic space), the shell
// parser only at ASCII ones. A line the router sends to task:explore or edit
// must be refused even when the shell parser reads its words differently.
func TestRestrictedSeesTheRoutedCommand(t *testing.T) {
	tests := []struct {
		exclude []string
		cmd     string
	}{
		{[]string{"task:"}, "\u00a0task:explore --prompt x --description y"},
		{[]string{"task:"}, "\u3000task:general --prompt x --description y"},
		{[]string{"task:"}, "task:explore\u00a0--prompt x"},
		{[]string{"edit"}, "edit\u00a0a.txt old new"},
		{[]string{"edit"}, "\u2003edit a.txt old new"},
		{[]string{"write"}, "\u0085write a.txt x"},
	}
	for _, tt := range tests {
		d := &countingTool{result: Result{Output: "ran"}}
		r := NewRestricted(d, tt.exclude)
		res := restrictedCall(r, tt.cmd)
		if d.calls.Load() != 0 || !res.IsError || res.Facts.Type != ExtrasTypeCommandBlocked {
			t.Errorf("%q with exclude %v: ran=%d result %+v, want it blocked", tt.cmd, tt.exclude, d.calls.Load(), res)
		}
	}
}
