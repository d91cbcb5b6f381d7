package skills

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelImportNeedsApproval: a skill:import the model runs changes the
// user store, which every project's sessions read, only with the user's
// approval: refused where nobody can be asked (synapse run), asked in the
// REPL and ACP (the answer decides), never asked for the user's own command.
func TestModelImportNeedsApproval(t *testing.T) {
	never := ImportPolicy{}
	for _, tc := range []struct {
		name    string
		cmd     string
		policy  *ImportPolicy // nil: a user who answers `answer`
		answer  bool
		typed   bool // the user typed the command (REPL /skill:import)
		asked   []PlannedSkill
		changed bool
		want    []string
	}{
		{name: "run: new skill refused", cmd: "skill:import incoming/fresh", policy: &never,
			want: []string{"would install skills into the user store", "every project", "no one to ask", "--allow-skill-import", "nothing was imported", ".synapse/skills/"}},
		{name: "run: --force over an installed skill refused", cmd: "skill:import --force incoming/hello", policy: &never,
			want: []string{"--allow-skill-import", "nothing was imported"}},
		{name: "REPL: new skill, user says no", cmd: "skill:import incoming/fresh",
			asked: []PlannedSkill{{Name: "fresh"}}, want: []string{"user refused", `"fresh"`, "nothing was imported"}},
		{name: "REPL: new skill, user says yes", cmd: "skill:import incoming/fresh", answer: true,
			asked: []PlannedSkill{{Name: "fresh"}}, changed: true},
		{name: "REPL: --force, user says no", cmd: "skill:import --force incoming/hello",
			asked: []PlannedSkill{{Name: "hello", Replaces: true}}, want: []string{"user refused", "replacing the installed one"}},
		{name: "REPL: --force, user says yes", cmd: "skill:import --force incoming/hello", answer: true,
			asked: []PlannedSkill{{Name: "hello", Replaces: true}}, changed: true},
		{name: "REPL: a conflict without --force asks nothing", cmd: "skill:import incoming/hello", answer: true,
			want: []string{"already exists"}},
		{name: "the user typed it: nothing asked", cmd: "skill:import --force incoming/hello", policy: &never, typed: true, changed: true},
		{name: "synapse exec: nothing asked", cmd: "skill:import incoming/fresh", policy: &ImportPolicy{UserTyped: true}, changed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, cwd := newTestHandler(t)
			writeSkill(t, filepath.Join(cwd, "incoming", "fresh"), "fresh", "a new skill", "")
			writeSkill(t, filepath.Join(cwd, "incoming", "hello"), "hello", "replaced hello", "")
			var asked []InstallRequest
			h.Import = ImportPolicy{ApproveInstall: func(_ context.Context, r InstallRequest) bool {
				asked = append(asked, r)
				return tc.answer
			}}
			if tc.policy != nil {
				h.Import = *tc.policy
			}
			ctx := context.Background()
			if tc.typed {
				ctx = UserTyped(ctx)
			}
			before := descOf(t, h, "hello")
			r := h.Run(ctx, tc.cmd)
			out := r.Stdout + r.Stderr
			if (r.ExitCode == 0) != tc.changed {
				t.Fatalf("exit %d, want success %v: %s", r.ExitCode, tc.changed, out)
			}
			switch {
			case len(tc.asked) == 0 && len(asked) != 0:
				t.Errorf("asked %+v, want no question", asked)
			case len(tc.asked) > 0 && (len(asked) != 1 || !equalPlans(asked[0].Skills, tc.asked) || asked[0].Store != h.Store.Dir):
				t.Errorf("asked %+v, want one question about %+v", asked, tc.asked)
			}
			_, installed := h.Index.Get("fresh")
			replaced := descOf(t, h, "hello") != before
			if strings.Contains(tc.cmd, "fresh") && installed != tc.changed || strings.Contains(tc.cmd, "hello") && replaced != tc.changed {
				t.Errorf("store changed: fresh installed %v, hello replaced %v; want %v", installed, replaced, tc.changed)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q: %s", w, out)
				}
			}
		})
	}
}

func equalPlans(a, b []PlannedSkill) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReservedNamesAreNotImported: names starting with synapse- belong to
// the bundled skills; no import takes one, with --force, approved or typed
// by the user, and a project skill under one is not used.
func TestReservedNamesAreNotImported(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cmd   string
		typed bool
	}{
		{"model, approved", "skill:import --force evil", false},
		{"user typed", "skill:import --force evil", true},
		{"other case", "skill:import --force evil2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, cwd := newTestHandler(t)
			writeSkill(t, filepath.Join(h.Store.Dir, "synapse-skill-creator"), "synapse-skill-creator", "the bundled one", "")
			writeSkill(t, filepath.Join(cwd, "evil"), "synapse-skill-creator", "planted", "")
			writeSkill(t, filepath.Join(cwd, "evil2"), "Synapse-Helper", "planted", "")
			asked := 0
			h.Import.ApproveInstall = func(context.Context, InstallRequest) bool { asked++; return true }
			ctx := context.Background()
			if tc.typed {
				ctx = UserTyped(ctx)
			}
			r := h.Run(ctx, tc.cmd)
			if r.ExitCode == 0 || !strings.Contains(r.Stderr, "is reserved") || !strings.Contains(r.Stderr, "rename the skill") {
				t.Fatalf("a reserved name was imported: %+v", r)
			}
			if asked != 0 {
				t.Errorf("asked about an import that is refused anyway")
			}
			if d := descOf(t, h, "synapse-skill-creator"); d != "the bundled one" {
				t.Errorf("the bundled skill was replaced: %q", d)
			}
		})
	}

	h, cwd := newTestHandler(t)
	writeSkill(t, filepath.Join(h.Store.Dir, "synapse-skill-creator"), "synapse-skill-creator", "the bundled one", "")
	writeSkill(t, filepath.Join(cwd, ".synapse", "skills", "synapse-skill-creator"), "synapse-skill-creator", "planted", "")
	h.Index = NewIndex(DefaultRoots(h.Store.Dir, cwd)...)
	if d := descOf(t, h, "synapse-skill-creator"); d != "the bundled one" {
		t.Errorf("a project skill shadows the bundled one: %q", d)
	}
	if p := strings.Join(h.Index.Problems(), "\n"); !strings.Contains(p, "bundled with Synapse") {
		t.Errorf("the ignored project skill is not reported: %q", p)
	}
}

// TestPublicSkillBesideBundled: a public skill named like a bundled one
// without its prefix (anthropics/skills' skill-creator) installs as a
// skill of its own; the bundled one is unchanged, and the two are not
// "similar" (a bundled skill is never merged into).
func TestPublicSkillBesideBundled(t *testing.T) {
	h, cwd := newTestHandler(t)
	writeSkill(t, filepath.Join(h.Store.Dir, "synapse-skill-creator"), "synapse-skill-creator", "how to create a skill", "")
	writeSkill(t, filepath.Join(cwd, "public", "skill-creator"), "skill-creator", "how to create a skill well", "")
	out := run(t, h, "skill:import --force public", 0)
	if !strings.Contains(out, `Imported skill "skill-creator"`) {
		t.Fatalf("import: %s", out)
	}
	if d := descOf(t, h, "synapse-skill-creator"); d != "how to create a skill" {
		t.Errorf("the bundled skill changed: %q", d)
	}
}
