package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/textutil"
)

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// HookName is the auto-enhance stop hook's name in the hooks block.
const HookName = "skill-enhance"

// DefaultTranscriptChars bounds the transcript given to the sub-agent;
// DefaultResultChars each tool result in it (config's defaults).
const (
	DefaultTranscriptChars = config.DefaultMaxEnhanceContextChars
	DefaultResultChars     = config.DefaultToolResultSummaryLimit
)

// RunFunc runs the skill:enhance sub-agent with prompt, its writable skills
// directory being skillsDir, and returns its final answer.
type RunFunc func(ctx context.Context, skillsDir, prompt string) (string, error)

// Enhancer is the auto-enhance stop hook.
type Enhancer struct {
	// Store is the user skill store: every change is committed through it.
	Store *skills.Store
	// Run runs the enhance sub-agent.
	Run RunFunc
	// Enabled reports whether auto-enhance is on now (/skill enhance
	// switches it while the REPL runs).
	Enabled func() bool
	// Profile is the trigger profile (config.Profile*).
	Profile string
	// Timeout bounds one enhancement, retry included (SYNAPSE_SKILL_SUBAGENT_TIMEOUT).
	Timeout time.Duration
	// MaxTranscript bounds the transcript (0: DefaultTranscriptChars;
	// SYNAPSE_MAX_ENHANCE_CONTEXT_CHARS).
	MaxTranscript int
	// MaxResult bounds each tool result in it (0: DefaultResultChars;
	// SYNAPSE_TOOL_RESULT_SUMMARY_LIMIT).
	MaxResult int
	// Invalidate is called after the store changed (the skill index).
	Invalidate func()
}

// Hook is the stop hook to register (hooks.Set.AddStop(HookName, e.Hook)).
func (e *Enhancer) Hook(ctx context.Context, in hooks.StopInput) (string, error) {
	if e.Enabled != nil && !e.Enabled() {
		return "", nil
	}
	sig := Score(in.Conversation)
	if !Worth(sig, e.Profile) {
		return "", nil
	}
	in.Progress(fmt.Sprintf("[Skill] this session looks worth learning from (%s): running the skill-enhance sub-agent…", sig))
	if e.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.Timeout)
		defer cancel()
	}
	line, err := e.enhance(ctx, Transcript(in.Conversation, e.maxTranscript(), e.MaxResult), sig)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "", fmt.Errorf("[Skill] enhancement timed out after %s; raise SYNAPSE_SKILL_SUBAGENT_TIMEOUT (milliseconds) or turn it off with /skill enhance --off", e.Timeout)
	}
	return line, err
}

func (e *Enhancer) maxTranscript() int {
	if e.MaxTranscript > 0 {
		return e.MaxTranscript
	}
	return DefaultTranscriptChars
}

// Outcome is the sub-agent's answer contract: its last line.
type Outcome struct {
	Kind   string // "Created", "Enhanced" or "None"
	Name   string
	Reason string
}

// contractLine is compiled on first use, not at every start.
var contractLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\[Skill\] (?:(Created|Enhanced): ([A-Za-z0-9][A-Za-z0-9._-]*)|No enhancement needed(?:[:\s(—-]+(.*))?)\s*$`)
})

// ParseOutcome reads the contract from the answer's last non-empty line.
func ParseOutcome(answer string) (Outcome, bool) {
	lines := strings.Split(strings.TrimSpace(answer), "\n")
	last := strings.Trim(strings.TrimSpace(lines[len(lines)-1]), "`*")
	m := contractLine().FindStringSubmatch(last)
	if m == nil {
		return Outcome{}, false
	}
	if m[1] != "" {
		return Outcome{Kind: m[1], Name: m[2]}, true
	}
	return Outcome{Kind: "None", Reason: strings.TrimRight(strings.TrimSpace(m[3]), ")")}, true
}

// enhance stages a copy of the store, runs the sub-agent on it (once more
// when its answer breaks the contract), and commits the skill it names.
func (e *Enhancer) enhance(ctx context.Context, transcript string, sig Signals) (string, error) {
	return e.runStaged(ctx, nil, func(stage string) string { return Prompt(transcript, sig, stage) }, nil)
}

// Merge has the sub-agent merge the skill folder dir into the installed
// skill target (skill:import --merge) and commits the result.
func (e *Enhancer) Merge(ctx context.Context, dir, target string) (string, error) {
	if e.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.Timeout)
		defer cancel()
	}
	var incoming string
	prepare := func(stage string) error {
		incoming = filepath.Join(stage, ".incoming", filepath.Base(dir))
		return skills.CopyDir(dir, incoming)
	}
	prompt := func(stage string) string { return MergePrompt(incoming, target, stage) }
	only := func(o Outcome) error {
		if o.Kind == "Created" || o.Name != target && o.Kind != "None" {
			return fmt.Errorf("the sub-agent reported %s: %s, but it was asked to merge into %s; nothing was installed", o.Kind, o.Name, target)
		}
		return nil
	}
	return e.runStaged(ctx, prepare, prompt, only)
}

// MergePrompt is the sub-agent's task for skill:import --merge.
func MergePrompt(incoming, target, stage string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Merge the skill in %s (being imported) into the installed skill %s.\n\n", incoming, target)
	b.WriteString("# How\n\n")
	b.WriteString("1. Run `skill:load synapse-skill-enhance` (section Merging) and `skill:load synapse-skill-creator`, and follow them.\n")
	fmt.Fprintf(&b, "2. The installed skills are copied in %s (your writable skills directory). Change only %s there: keep its name and folder, take over what the imported skill adds, drop duplicates.\n", stage, filepath.Join(stage, target))
	b.WriteString("3. Write only inside that directory. Nothing you write elsewhere is kept.\n\n")
	fmt.Fprintf(&b, "# Answer contract\n\nThe very last line of your answer must be exactly one of:\n[Skill] Enhanced: %s\n[Skill] No enhancement needed: <reason>\n", target)
	return b.String()
}

// runStaged runs the sub-agent on a scratch copy of the store (prepare may
// add to it), retries once when its answer breaks the contract, and commits
// the skill it names through the store. check may refuse an outcome.
func (e *Enhancer) runStaged(ctx context.Context, prepare func(stage string) error, prompt func(stage string) string, check func(Outcome) error) (string, error) {
	stage, err := NewStage(e.Store)
	if err != nil {
		return "", fmt.Errorf("[Skill] cannot create a scratch folder: %w", err)
	}
	defer os.RemoveAll(stage)
	if err := e.stageStore(stage); err != nil {
		return "", fmt.Errorf("[Skill] cannot copy the skill store for the sub-agent: %w", err)
	}
	if prepare != nil {
		if err := prepare(stage); err != nil {
			return "", fmt.Errorf("[Skill] cannot prepare the sub-agent's folder: %w", err)
		}
	}
	p := prompt(stage)
	answer, err := e.Run(ctx, stage, p)
	if err != nil {
		return "", fmt.Errorf("[Skill] the skill-enhance sub-agent failed: %w", err)
	}
	out, ok := ParseOutcome(answer)
	if !ok {
		answer, err = e.Run(ctx, stage, p+retryNote(answer))
		if err != nil {
			return "", fmt.Errorf("[Skill] the skill-enhance sub-agent failed: %w", err)
		}
		if out, ok = ParseOutcome(answer); !ok {
			return "[Skill] No enhancement needed (the sub-agent's answer did not follow the contract twice; nothing was changed)", nil
		}
	}
	if check != nil {
		if err := check(out); err != nil {
			return "", fmt.Errorf("[Skill] %w", err)
		}
	}
	if out.Kind == "None" {
		reason := out.Reason
		if reason == "" {
			reason = "the sub-agent gave no reason"
		}
		return "[Skill] No enhancement needed (" + reason + ")", nil
	}
	return e.commit(stage, out)
}

func retryNote(answer string) string {
	return "\n\n# Your previous answer broke the contract\n\nIt ended with:\n\n" + textutil.Clip(lastLine(answer), 300) +
		"\n\nThe files you wrote are still in place. Finish now, and make the very last line of your answer exactly one of:\n" +
		"[Skill] Created: <name>\n[Skill] Enhanced: <name>\n[Skill] No enhancement needed: <reason>\n"
}

// commit installs the staged skill out.Name through the store.
func (e *Enhancer) commit(stage string, out Outcome) (string, error) {
	src := filepath.Join(stage, out.Name)
	// The sub-agent could write anything there: only a real folder is taken
	// (the store's copy reads through descriptors and skips links inside).
	if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("[Skill] the sub-agent reported %s: %s, but wrote no folder %s; nothing was installed", out.Kind, out.Name, out.Name)
	}
	s, err := skills.Load(src, skills.SourceUser)
	if err != nil {
		return "", fmt.Errorf("[Skill] the sub-agent reported %s: %s, but the skill cannot be installed: %w", out.Kind, out.Name, err)
	}
	if skills.Reserved(out.Name) {
		return "", fmt.Errorf("[Skill] the sub-agent changed %s: %s; nothing was installed", out.Name, reservedNote)
	}
	if s.Name != out.Name {
		return "", fmt.Errorf("[Skill] the sub-agent wrote %s with name %q in its frontmatter; the folder and the name must match. Nothing was installed", out.Name, s.Name)
	}
	if strings.TrimSpace(s.Description) == "" {
		return "", fmt.Errorf("[Skill] %s has no description in its frontmatter; nothing was installed", out.Name)
	}
	snap, created, err := e.Store.Commit(out.Name, src, "skill auto-enhance")
	if e.Invalidate != nil {
		e.Invalidate()
	}
	if err != nil {
		return "", fmt.Errorf("[Skill] install %s: %w", out.Name, err)
	}
	verb := "Enhanced"
	if created {
		verb = "Created"
	}
	return fmt.Sprintf("[Skill] %s: %s (snapshot %d; skill:rollback %s lists its versions)", verb, out.Name, snap.Number, out.Name), nil
}

// reservedNote says why a sub-agent's change to a bundled skill is not kept.
const reservedNote = "names starting with " + skills.BundledPrefix + " belong to the skills bundled with Synapse, which only Synapse's own updates change"

// stageStore copies the installed user skills into stage.
func (e *Enhancer) stageStore(stage string) error { return StageStore(e.Store, stage) }

// NewStage makes the sub-agent's scratch skills folder inside the store
// (hidden, so the index skips it): not the shared temp dir, where another
// process could plant or swap files between the sub-agent's work and the
// commit. Only the sub-agent it is given to gets it writable.
func NewStage(st *skills.Store) (string, error) {
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(st.Dir, stagePrefix)
}

// stagePrefix names the stages NewStage makes.
const stagePrefix = ".enhance-"

// minStageAge is the least age at which RemoveStaleStages takes a stage
// for a crashed run's leftover, whatever the enhance timeout.
const minStageAge = 6 * time.Hour

// RemoveStaleStages removes the stages that enhance runs which crashed or
// were killed left in the store: hidden ".enhance-*" folders owned by this
// user and untouched for longer than twice timeout (at least 6 hours), so
// that a run still working in another session keeps its own. Links and
// anything that is not a plain folder are left alone; nothing is followed.
func RemoveStaleStages(st *skills.Store, timeout time.Duration, now time.Time) ([]string, error) {
	entries, err := os.ReadDir(st.Dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the skill store: %w", err)
	}
	age := max(2*timeout, minStageAge)
	var removed []string
	var errs []error
	for _, ent := range entries {
		if !strings.HasPrefix(ent.Name(), stagePrefix) || ent.Type()&fs.ModeType != fs.ModeDir {
			continue
		}
		p := filepath.Join(st.Dir, ent.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || now.Sub(fi.ModTime()) < age {
			continue
		}
		if sys, ok := fi.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
			continue
		}
		// RemoveAll removes links inside as links, never what they point to.
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, ent.Name())
	}
	return removed, errors.Join(errs...)
}

// StageStore copies the installed user skills (not their snapshots) into
// stage, where a sub-agent may change them.
func StageStore(st *skills.Store, stage string) error {
	entries, err := os.ReadDir(st.Dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ent := range entries {
		if strings.HasPrefix(ent.Name(), ".") || !ent.IsDir() {
			continue
		}
		if err := skills.CopyDir(filepath.Join(st.Dir, ent.Name()), filepath.Join(stage, ent.Name())); err != nil {
			return err
		}
	}
	return nil
}

// CommitChanged installs through the store every skill folder of stage
// that is new or differs from the installed one (a task:skill:enhance run
// by the model), and says what it did, one line each. Folders that are not
// valid skills are reported and left out.
func CommitChanged(st *skills.Store, stage, reason string) []string {
	entries, err := os.ReadDir(stage)
	if err != nil {
		return []string{fmt.Sprintf("[Skill] cannot read the sub-agent's skills folder: %v", err)}
	}
	var out []string
	for _, ent := range entries {
		name := ent.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		src := filepath.Join(stage, name)
		if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
			continue // links and files are not skills
		}
		have, err := skills.ContentHash(src)
		if err == nil && skills.Reserved(name) {
			if cur, cerr := skills.ContentHash(filepath.Join(st.Dir, name)); cerr != nil || cur != have {
				out = append(out, fmt.Sprintf("[Skill] %s left out: %s", name, reservedNote))
			}
			continue
		}
		if err != nil {
			out = append(out, fmt.Sprintf("[Skill] %s left out: %v", name, err))
			continue
		}
		if cur, err := skills.ContentHash(filepath.Join(st.Dir, name)); err == nil && cur == have {
			continue
		}
		s, err := skills.Load(src, skills.SourceUser)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("[Skill] %s left out: %v", name, err))
			continue
		case s.Name != name:
			out = append(out, fmt.Sprintf("[Skill] %s left out: its frontmatter name is %q; folder and name must match", name, s.Name))
			continue
		case strings.TrimSpace(s.Description) == "":
			out = append(out, fmt.Sprintf("[Skill] %s left out: no description in its frontmatter", name))
			continue
		}
		snap, created, err := st.Commit(name, src, reason)
		if err != nil {
			out = append(out, fmt.Sprintf("[Skill] installing %s failed: %v", name, err))
			continue
		}
		verb := "Enhanced"
		if created {
			verb = "Created"
		}
		out = append(out, fmt.Sprintf("[Skill] %s: %s (snapshot %d)", verb, name, snap.Number))
	}
	return out
}

// Prompt is the enhance sub-agent's task.
func Prompt(transcript string, sig Signals, stage string) string {
	var b strings.Builder
	b.WriteString("A session just finished that looks worth learning from (" + sig.String() + ").\n")
	b.WriteString("Decide whether it holds a reusable procedure, and if so capture it as a skill.\n\n")
	b.WriteString("# How\n\n")
	b.WriteString("1. Run `skill:load synapse-skill-enhance` and `skill:load synapse-skill-creator` and follow them.\n")
	fmt.Fprintf(&b, "2. The installed skills are copied in %s (your writable skills directory). Prefer improving one that covers this kind of task over creating a new one; a new skill goes in a new folder there named like its frontmatter name.\n", stage)
	b.WriteString("3. Write only inside that directory. Nothing you write elsewhere is kept.\n\n")
	b.WriteString("# Answer contract\n\nThe very last line of your answer must be exactly one of:\n")
	b.WriteString("[Skill] Created: <name>\n[Skill] Enhanced: <name>\n[Skill] No enhancement needed: <reason>\n\n")
	b.WriteString("# Transcript of the session (oldest parts may be left out)\n\n")
	b.WriteString(transcript)
	return b.String()
}

// Transcript renders conv compactly within max characters, keeping the
// newest part: the end of a session is where the solution is.
func Transcript(conv []llm.Message, max, maxResult int) string {
	if maxResult <= 0 {
		maxResult = DefaultResultChars
	}
	var parts []string
	for _, m := range conv {
		parts = append(parts, renderMessage(m, maxResult)...)
	}
	total := 0
	keep := len(parts)
	for i := len(parts) - 1; i >= 0; i-- {
		if total+len(parts[i])+1 > max {
			break
		}
		total += len(parts[i]) + 1
		keep = i
	}
	out := strings.Join(parts[keep:], "\n")
	if keep > 0 {
		out = fmt.Sprintf("[%d earlier entries left out]\n", keep) + out
	}
	return out
}

func renderMessage(m llm.Message, maxResult int) []string {
	var out []string
	switch m.Role {
	case llm.RoleUser:
		if isReminder(m.Text) {
			return nil
		}
		out = append(out, "USER: "+textutil.Clip(agent.TypedPrompt(m.Text), 2000))
	case llm.RoleAssistant:
		if t := strings.TrimSpace(m.Text); t != "" {
			out = append(out, "ASSISTANT: "+textutil.Clip(t, 1500))
		}
		for _, c := range m.ToolCalls {
			out = append(out, "$ "+textutil.Clip(commandOf(c), 600))
		}
	case llm.RoleTool:
		tag := "OUTPUT"
		if m.IsError {
			tag = "ERROR"
		}
		out = append(out, tag+": "+clipLines(strings.TrimSpace(m.Text), maxResult))
	}
	return out
}

// clipLines keeps the whole lines of s that fit in n characters and counts
// the rest: a line cut in the middle reads as a different line (a path, a
// number). Only a first line longer than n is cut.
func clipLines(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	used := 0
	for i, l := range lines {
		if c := utf8.RuneCountInString(l); used+c <= n {
			used += c
			continue
		}
		if i == 0 {
			first := textutil.Clip(strings.TrimSuffix(l, "\n"), n)
			if len(lines) == 1 {
				return first
			}
			return first + "\n" + moreLines(len(lines)-1)
		}
		return strings.Join(lines[:i], "") + moreLines(len(lines)-i)
	}
	return s
}

func moreLines(n int) string {
	if n == 1 {
		return "[… 1 more line]"
	}
	return fmt.Sprintf("[… %d more lines]", n)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
