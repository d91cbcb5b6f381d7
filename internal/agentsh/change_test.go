package agentsh

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// edit and write report the content before and after for the person's diff;
// the change is never part of what is serialised (the model's result).
func TestFileChangeForThePerson(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	ctx := context.Background()
	p := filepath.Join(ex.dir, "a.txt")

	r := sh.Run(ctx, "write a.txt 'one\ntwo\n'")
	if r.ExitCode != 0 || r.Change == nil {
		t.Fatalf("write new file: %+v", r)
	}
	if want := (command.FileChange{Path: p, New: "one\ntwo\n", Created: true}); *r.Change != want {
		t.Errorf("new file change = %+v, want %+v", *r.Change, want)
	}

	r = sh.Run(ctx, "edit a.txt two three")
	if r.ExitCode != 0 || r.Change == nil {
		t.Fatalf("edit: %+v", r)
	}
	if want := (command.FileChange{Path: p, Old: "one\ntwo\n", New: "one\nthree\n"}); *r.Change != want {
		t.Errorf("edit change = %+v, want %+v", *r.Change, want)
	}

	r = sh.Run(ctx, "write a.txt 'fresh\n'")
	if r.Change == nil || r.Change.Created || r.Change.Old != "one\nthree\n" || r.Change.New != "fresh\n" {
		t.Errorf("overwrite change = %+v", r.Change)
	}

	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "fresh") {
		t.Errorf("the change is serialised: %s", data)
	}

	// A failed edit changes nothing and reports no change.
	if r := sh.Run(ctx, "edit a.txt absent x"); r.ExitCode == 0 || r.Change != nil {
		t.Errorf("failed edit: %+v", r)
	}

	// Too large to diff: the file is written, no change is carried.
	big := strings.Repeat("x", command.MaxChangeBytes+1)
	if err := os.WriteFile(filepath.Join(ex.dir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := sh.Run(ctx, "edit big.txt xx yy"); r.ExitCode != 0 || r.Change != nil {
		t.Errorf("large edit: exit %d, change %v", r.ExitCode, r.Change != nil)
	}
}
