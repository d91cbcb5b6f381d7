package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/skills"
)

func TestSkillSlashCommands(t *testing.T) {
	store := filepath.Join(t.TempDir(), "skills")
	if err := os.MkdirAll(filepath.Join(store, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: notes\ndescription: take notes \x1b[31mred\x1b[0m\n---\nbody\n"
	if err := os.WriteFile(filepath.Join(store, "notes", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &skills.Handler{Index: skills.NewIndex(skills.Root{Dir: store, Source: skills.SourceUser}), Store: &skills.Store{Dir: store}}
	settings := filepath.Join(t.TempDir(), "settings.json")
	on := false
	tweak := func(o *Options) {
		o.SkillCommand = h.Run
		o.AutoEnhance = func() bool { return on }
		o.SetAutoEnhance = func(v bool) error {
			if err := config.SetAutoEnhance(settings, v); err != nil {
				return err
			}
			on = v
			return nil
		}
	}
	out, code := runPiped(t, &fakeAgent{model: "m"}, "/skills\n/skill:info notes\n/skill:rollback notes\n/skill:load nope\n/skill enhance\n/skill enhance --on\n/skill enhance\n/skill bogus\n", tweak)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"1 skill(s):", "notes — take notes", "Name: notes", "Created: ", "Snapshots: none",
		`Unknown skill "nope"`, "Skill auto-enhance is off.", "costs an extra sub-agent run", "Skill auto-enhance is on.", "usage: /skill enhance [--on|--off]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[31m") {
		t.Error("a skill's escape sequence reached the terminal")
	}
	s, err := config.LoadSettings(settings)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _ := s.SkillEnhanceConfig(); !cfg.AutoEnhance {
		t.Errorf("--on not saved: %s", s.SkillEnhance)
	}
}
