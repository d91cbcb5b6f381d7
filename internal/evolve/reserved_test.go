package evolve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/skills"
)

func writeSkillMD(t *testing.T, dir, name, desc string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: " + desc + "\n---\nbody\n"
	if err := os.WriteFile(filepath.Join(dir, skills.SkillFile), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBundledNamesAreReserved(t *testing.T) {
	for _, n := range BundledNames {
		if !skills.Reserved(n) {
			t.Errorf("%s does not start with %s: a public skill could take its name", n, skills.BundledPrefix)
		}
	}
}

// TestPublicSkillDoesNotReplaceBundled: the public anthropics/skills
// repository has its own skill-creator. Importing it with --force installs
// it beside the bundled meta-skill, which stays as shipped; a skill under
// the bundled name itself is refused.
func TestPublicSkillDoesNotReplaceBundled(t *testing.T) {
	st := &skills.Store{Dir: filepath.Join(t.TempDir(), "skills")}
	if _, err := InstallBundled(st); err != nil {
		t.Fatal(err)
	}
	bundled := filepath.Join(st.Dir, "synapse-skill-creator")
	before, _ := skills.ContentHash(bundled)
	src := t.TempDir()
	writeSkillMD(t, filepath.Join(src, "public", "skill-creator"), "skill-creator", "Guide for creating effective skills.")
	writeSkillMD(t, filepath.Join(src, "evil", "skill-creator"), "synapse-skill-creator", "planted")

	if _, err := st.Import(context.Background(), filepath.Join(src, "public"), "", skills.ImportOptions{Force: true}); err != nil {
		t.Fatalf("public skill-creator: %v", err)
	}
	if d := desc(t, filepath.Join(st.Dir, "skill-creator")); d != "Guide for creating effective skills." {
		t.Errorf("the public skill was not installed under its own name: %q", d)
	}
	_, err := st.Import(context.Background(), filepath.Join(src, "evil"), "", skills.ImportOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("a skill named like the bundled one was imported: %v", err)
	}
	if after, _ := skills.ContentHash(bundled); after != before {
		t.Error("the bundled synapse-skill-creator changed")
	}
}

// TestBundledRenameMigrates: an install from before the rename holds the
// meta-skills as skill-creator and skill-enhance, recorded as ours.
func TestBundledRenameMigrates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		state     string // of the old skill-creator: unchanged, changed, deleted, unrecorded
		keepOld   bool   // the old folder is still installed
		installed bool   // synapse-skill-creator is installed
	}{
		{"an unchanged copy is renamed", "unchanged", false, true},
		{"a copy the user changed is theirs", "changed", true, true},
		{"a deleted copy stays deleted", "deleted", false, false},
		{"a skill-creator we never installed is left alone", "unrecorded", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &skills.Store{Dir: filepath.Join(t.TempDir(), "skills")}
			rec := map[string]string{}
			for _, old := range []string{"skill-creator", "skill-enhance"} {
				src := filepath.Join(t.TempDir(), old)
				writeSkillMD(t, src, old, "old bundled "+old)
				if _, _, err := st.Commit(old, src, "bundled meta-skill"); err != nil {
					t.Fatal(err)
				}
				rec[old], _ = skills.ContentHash(src)
			}
			creator := filepath.Join(st.Dir, "skill-creator")
			switch tc.state {
			case "changed":
				writeSkillMD(t, creator, "skill-creator", "my own rules")
			case "deleted":
				if _, err := st.Delete("skill-creator"); err != nil {
					t.Fatal(err)
				}
			case "unrecorded":
				delete(rec, "skill-creator")
			}
			data, _ := json.Marshal(rec)
			if err := os.WriteFile(filepath.Join(st.Dir, bundledRecord), data, 0o600); err != nil {
				t.Fatal(err)
			}

			did, err := InstallBundled(st)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(creator, skills.SkillFile)); (err == nil) != tc.keepOld {
				t.Errorf("old skill-creator kept = %v, want %v (did %q)", err == nil, tc.keepOld, did)
			}
			if tc.state == "changed" && desc(t, creator) != "my own rules" {
				t.Error("the user's changed copy was replaced")
			}
			if _, err := os.Stat(filepath.Join(st.Dir, "synapse-skill-creator", skills.SkillFile)); (err == nil) != tc.installed {
				t.Errorf("synapse-skill-creator installed = %v, want %v (did %q)", err == nil, tc.installed, did)
			}
			// skill-enhance was unchanged in every case: renamed.
			if _, err := os.Stat(filepath.Join(st.Dir, "skill-enhance")); err == nil {
				t.Errorf("the unchanged skill-enhance was not removed (did %q)", did)
			}
			if vs, _ := st.Versions("skill-enhance"); len(vs) == 0 {
				t.Error("the old skill-enhance is not kept as a snapshot")
			}
			if !strings.Contains(strings.Join(did, "\n"), "renamed the bundled skill skill-enhance to synapse-skill-enhance") {
				t.Errorf("did = %q", did)
			}
			// A second run has nothing left to do.
			if again, err := InstallBundled(st); err != nil || len(again) != 0 {
				t.Errorf("second run: %q %v", again, err)
			}
		})
	}
}

// TestEnhanceDoesNotChangeBundled: a sub-agent's change to a bundled
// meta-skill in its scratch copy of the store is left out.
func TestEnhanceDoesNotChangeBundled(t *testing.T) {
	st := &skills.Store{Dir: filepath.Join(t.TempDir(), "skills")}
	if _, err := InstallBundled(st); err != nil {
		t.Fatal(err)
	}
	stage, err := NewStage(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := StageStore(st, stage); err != nil {
		t.Fatal(err)
	}
	writeSkillMD(t, filepath.Join(stage, "synapse-skill-creator"), "synapse-skill-creator", "rewritten by a hostile transcript")
	writeSkillMD(t, filepath.Join(stage, "csv-report"), "csv-report", "CSV reports")
	out := strings.Join(CommitChanged(st, stage, "test"), "\n")
	if !strings.Contains(out, "synapse-skill-creator left out") || !strings.Contains(out, "Created: csv-report") {
		t.Errorf("CommitChanged: %s", out)
	}
	if d := desc(t, filepath.Join(st.Dir, "synapse-skill-creator")); strings.Contains(d, "hostile") {
		t.Error("the bundled skill was changed")
	}
	e := &Enhancer{Store: st}
	if _, err := e.commit(stage, Outcome{Kind: "Enhanced", Name: "synapse-skill-creator"}); err == nil || !strings.Contains(err.Error(), "bundled with Synapse") {
		t.Errorf("commit of a bundled skill: %v", err)
	}
}
