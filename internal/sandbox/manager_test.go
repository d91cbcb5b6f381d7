package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// fakeSession records calls; execFn scripts the results.
type fakeSession struct {
	mu      sync.Mutex
	calls   []string
	closed  bool
	dead    bool
	execFn  func(cmd string) (command.Result, error)
	started SessionOptions
}

func (s *fakeSession) Execute(ctx context.Context, c string) (command.Result, error) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	fn := s.execFn
	s.mu.Unlock()
	if fn != nil {
		return fn(c)
	}
	return command.Result{Stdout: "ran " + c}, nil
}
func (s *fakeSession) Restart(context.Context) error { return nil }
func (s *fakeSession) Close() error                  { s.mu.Lock(); s.closed = true; s.mu.Unlock(); return nil }
func (s *fakeSession) Cwd() string                   { return s.started.Dir }
func (s *fakeSession) Alive() bool                   { s.mu.Lock(); defer s.mu.Unlock(); return !s.dead && !s.closed }

// fakeBackend is what the fake provider creates.
type fakeBackend struct {
	policy   Policy
	execFn   func(cmd string) (command.Result, error)
	disposed bool
}

func (b *fakeBackend) Execute(ctx context.Context, c string) (command.Result, error) {
	if b.execFn != nil {
		return b.execFn(c)
	}
	return command.Result{Stdout: "ok " + c}, nil
}
func (b *fakeBackend) Cwd() string                   { return "" }
func (b *fakeBackend) Restart(context.Context) error { return nil }
func (b *fakeBackend) Policy() Policy                { return b.policy }
func (b *fakeBackend) Sandboxed() bool               { return true }
func (b *fakeBackend) Dispose() error                { b.disposed = true; return nil }

type fakeProvider struct {
	mu        sync.Mutex
	creates   int
	destroys  int
	createErr error
	backends  []*fakeBackend
	policies  []Policy
	onCreate  func(n int, b *fakeBackend)
	// hold, when set, keeps Create waiting until it closes or the
	// context ends; entered is told when Create starts waiting.
	hold, entered chan struct{}
}

func (p *fakeProvider) Name() string { return "fake" }
func (p *fakeProvider) Create(ctx context.Context, o CreateOptions) (Backend, error) {
	if p.hold != nil {
		p.entered <- struct{}{}
		select {
		case <-p.hold:
		case <-ctx.Done():
			return nil, fmt.Errorf("starting shell: %w", ctx.Err())
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.creates++
	if p.createErr != nil {
		return nil, p.createErr
	}
	b := &fakeBackend{policy: o.Policy}
	if p.onCreate != nil {
		p.onCreate(p.creates, b)
	}
	p.backends = append(p.backends, b)
	p.policies = append(p.policies, o.Policy)
	return b, nil
}
func (p *fakeProvider) Destroy(b Backend) error {
	p.mu.Lock()
	p.destroys++
	p.mu.Unlock()
	return b.Dispose()
}

func fakeManager(t *testing.T, prov *fakeProvider, cfg Config) (*Manager, *[]*fakeSession) {
	t.Helper()
	var sessions []*fakeSession
	m, err := NewManager(ManagerOptions{
		Config:   cfg,
		Cwd:      "/workspace",
		Env:      []string{"HOME=/home/u"},
		TempDir:  t.TempDir(),
		Registry: Registry{"fake": func() Provider { return prov }},
		StartSession: func(ctx context.Context, o SessionOptions) (Session, error) {
			s := &fakeSession{started: o}
			sessions = append(sessions, s)
			return s, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, &sessions
}

func TestGetSandboxLazyAndReused(t *testing.T) {
	prov := &fakeProvider{}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	if prov.creates != 0 {
		t.Fatalf("create called before first GetSandbox: %d", prov.creates)
	}
	b1, err := m.GetSandbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b2, err := m.GetSandbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if prov.creates != 1 || b1 != b2 {
		t.Fatalf("creates=%d same=%v, want 1 and the same backend", prov.creates, b1 == b2)
	}
}

func TestDisabledUsesUnsandboxedBackendWithoutCreate(t *testing.T) {
	prov := &fakeProvider{}
	m, sessions := fakeManager(t, prov, Config{Enabled: false, Provider: "fake"})
	b, err := m.GetSandbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if b.Sandboxed() {
		t.Fatal("backend is sandboxed with enabled=false")
	}
	if prov.creates != 0 {
		t.Fatalf("provider.create called %d times", prov.creates)
	}
	if len(*sessions) != 1 || (*sessions)[0].started.Argv[0] != "/bin/bash" {
		t.Fatalf("unsandboxed shell not started directly: %+v", *sessions)
	}
	// The unsandboxed backend does not refuse blacklisted text either.
	res, err := m.Execute(context.Background(), "cat ~/.ssh/id_rsa", "")
	if err != nil || res.Blocked {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if blocked, _, _ := m.CheckPath("/home/u/.ssh/id_rsa", false); blocked {
		t.Fatal("CheckPath blocks with the sandbox off")
	}
}

func TestCreateFailureFailsClosed(t *testing.T) {
	prov := &fakeProvider{createErr: errors.New("create failed")}
	m, sessions := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	if _, err := m.GetSandbox(context.Background()); err == nil || !strings.Contains(err.Error(), "create failed") {
		t.Fatalf("err = %v, want the create error", err)
	}
	res, err := m.Execute(context.Background(), "echo hi", "")
	if err == nil {
		t.Fatalf("execute ran: %+v", res)
	}
	if len(*sessions) != 0 {
		t.Fatalf("a shell was started (fail-open): %d", len(*sessions))
	}
}

func TestAddRuntimeWhitelistRebuildsAndKeepsPaths(t *testing.T) {
	prov := &fakeProvider{}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	ctx := context.Background()
	if _, err := m.GetSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.AddRuntimeWhitelist("/path1"); err != nil {
		t.Fatal(err)
	}
	if err := m.AddRuntimeWhitelist("/path2"); err != nil {
		t.Fatal(err)
	}
	if !prov.backends[0].disposed || prov.destroys != 1 {
		t.Fatalf("old sandbox not destroyed: destroys=%d", prov.destroys)
	}
	b, err := m.GetSandbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if prov.creates != 2 {
		t.Fatalf("creates = %d, want 2 (rebuilt)", prov.creates)
	}
	w := b.Policy().Whitelist
	if !slices.Contains(w, "/path1") || !slices.Contains(w, "/path2") {
		t.Fatalf("whitelist %v lacks /path1 or /path2", w)
	}
	if err := m.RemoveRuntimeWhitelist("/path1"); err != nil {
		t.Fatal(err)
	}
	if w := m.BuildPolicy().Whitelist; slices.Contains(w, "/path1") || !slices.Contains(w, "/path2") {
		t.Fatalf("after remove: %v", w)
	}
}

func TestExecuteRetriesOnceAfterCrash(t *testing.T) {
	// Found dead before the command reached it: the command never ran, so
	// it runs on a new shell, and the model is told the state was reset.
	prov := &fakeProvider{onCreate: func(n int, b *fakeBackend) {
		if n == 1 {
			b.execFn = func(string) (command.Result, error) { return command.Result{}, &crashError{err: errors.New("gone")} }
		}
	}}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	res, err := m.Execute(context.Background(), "echo hi", "/workspace")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Stdout, "ok echo hi") || !strings.Contains(res.Stderr, "the shell was restarted (the shell had died before this command reached it (gone))") {
		t.Fatalf("res = %+v, want the retried result and the note", res)
	}
	if prov.creates != 2 || prov.destroys != 1 || !prov.backends[0].disposed {
		t.Fatalf("creates=%d destroys=%d", prov.creates, prov.destroys)
	}
}

func TestExecuteDoesNotRerunADeliveredCommand(t *testing.T) {
	prov := &fakeProvider{onCreate: func(n int, b *fakeBackend) {
		if n == 1 {
			b.execFn = func(c string) (command.Result, error) {
				return command.Result{Stdout: "half"}, &crashError{delivered: true, err: errors.New("killed")}
			}
		}
	}}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	res, err := m.Execute(context.Background(), "git push", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "half" || res.ExitCode == 0 || !strings.Contains(res.Stderr, "the shell died while this command ran (killed), so it was not run again") {
		t.Fatalf("res = %+v", res)
	}
	if prov.creates != 1 || prov.destroys != 1 {
		t.Fatalf("creates=%d destroys=%d: the command must not run again", prov.creates, prov.destroys)
	}
	if res, _ := m.Execute(context.Background(), "echo next", ""); res.Stdout != "ok echo next" || prov.creates != 2 {
		t.Fatalf("next command: %+v, creates=%d", res, prov.creates)
	}
}

func TestExecuteRetriesOnlyOnce(t *testing.T) {
	prov := &fakeProvider{onCreate: func(n int, b *fakeBackend) {
		b.execFn = func(string) (command.Result, error) { return command.Result{}, &crashError{err: errors.New("gone")} }
	}}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	if _, err := m.Execute(context.Background(), "x", ""); !errors.Is(err, ErrCrashed) {
		t.Fatalf("err = %v", err)
	}
	if prov.creates != 2 {
		t.Fatalf("creates = %d, want 2", prov.creates)
	}
}

func TestBuildPolicyMerges(t *testing.T) {
	prov := &fakeProvider{}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake", Policy: ConfigPolicy{Whitelist: []string{"/data"}}})
	if err := m.AddRuntimeWhitelist("/extra"); err != nil {
		t.Fatal(err)
	}
	priv := m.PrivateTmp() // made on first use (a sandbox, or /tmp in read/write/edit)
	p := m.BuildPolicy()
	if p.TempDir != priv {
		t.Errorf("policy temp dir %q, want the private one %q", p.TempDir, priv)
	}
	for _, want := range []string{"/workspace", "/data", "/extra"} {
		if !slices.Contains(p.Whitelist, want) {
			t.Errorf("whitelist %v lacks %s", p.Whitelist, want)
		}
	}
	// The host temp dir is not writable: a private one is mounted as /tmp.
	if slices.Contains(p.Whitelist, resolvePath(os.TempDir(), "/", "")) || len(p.Whitelist) != 3 {
		t.Errorf("whitelist %v holds more than the three roots", p.Whitelist)
	}
	if m.opts.GOOS == "linux" {
		if err := checkPrivateDir(p.TempDir); err != nil || p.TempDir == "" {
			t.Errorf("policy temp dir %q: %v", p.TempDir, err)
		}
		if err := m.Shutdown(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(p.TempDir); err == nil {
			t.Errorf("Shutdown left the private temp directory %s", p.TempDir)
		}
	}
	for _, want := range DefaultBlacklist() {
		if !slices.Contains(p.Blacklist, want) {
			t.Errorf("blacklist lacks default %s", want)
		}
	}
}

func TestShutdownThenGetSandboxCreatesAgain(t *testing.T) {
	prov := &fakeProvider{}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	ctx := context.Background()
	b1, _ := m.GetSandbox(ctx)
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if prov.destroys != 1 {
		t.Fatalf("destroy not called: %d", prov.destroys)
	}
	b2, err := m.GetSandbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if prov.creates != 2 || b1 == b2 {
		t.Fatalf("creates=%d", prov.creates)
	}
}

func TestUnknownProviderListsAvailable(t *testing.T) {
	_, err := NewManager(ManagerOptions{Config: Config{Enabled: true, Provider: "docker"}, Cwd: "/w"})
	if err == nil || !strings.Contains(err.Error(), `"docker"`) || !strings.Contains(err.Error(), "local") {
		t.Fatalf("err = %v", err)
	}
}

func TestRuntimeWhitelistIsPerManager(t *testing.T) {
	a, _ := fakeManager(t, &fakeProvider{}, Config{Enabled: true, Provider: "fake"})
	if err := a.AddRuntimeWhitelist("/extra"); err != nil {
		t.Fatal(err)
	}
	b, _ := fakeManager(t, &fakeProvider{}, Config{Enabled: true, Provider: "fake"})
	if slices.Contains(b.BuildPolicy().Whitelist, "/extra") {
		t.Fatal("managerB inherited managerA's session whitelist")
	}
}

func TestPermanentWhitelistLoadsInNewManager(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, "sandbox.json")
	writeFile(t, cfgPath, `{"enabled": true, "custom": {"keep": [1, 2]}, "policy": {"network": {"allowNetwork": false}, "x": "y"}}`)
	newM := func() *Manager {
		m, err := NewManager(ManagerOptions{ConfigPath: cfgPath, Cwd: "/workspace", Env: []string{"HOME=" + home}, TempDir: t.TempDir(),
			Registry:     Registry{"local": func() Provider { return &fakeProvider{} }},
			StartSession: func(context.Context, SessionOptions) (Session, error) { return &fakeSession{}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := newM()
	if err := a.AddPermanentWhitelist("/extra"); err != nil {
		t.Fatal(err)
	}
	// Seed 003: the session whitelist is updated too.
	if !slices.Contains(a.BuildPolicy().Whitelist, "/extra") {
		t.Fatal("the current manager's whitelist lacks /extra")
	}
	b := newM()
	if !slices.Contains(b.BuildPolicy().Whitelist, "/extra") {
		t.Fatal("a new manager did not load /extra from sandbox.json")
	}
	data, _ := os.ReadFile(cfgPath)
	for _, keep := range []string{`"custom"`, `"keep"`, `"x": "y"`, `"/extra"`, `"enabled": true`} {
		if !strings.Contains(string(data), keep) {
			t.Errorf("sandbox.json lost %s:\n%s", keep, data)
		}
	}
	// Adding again does not duplicate.
	if err := b.AddPermanentWhitelist("/extra"); err != nil {
		t.Fatal(err)
	}
	data2, _ := os.ReadFile(cfgPath)
	if strings.Count(string(data2), `"/extra"`) != 1 {
		t.Fatalf("duplicated entry:\n%s", data2)
	}
}

func TestProbeDecidesDefault(t *testing.T) {
	dir := t.TempDir()
	opts := func(probeErr error) ManagerOptions {
		return ManagerOptions{ConfigPath: filepath.Join(dir, "missing.json"), Cwd: "/w", TempDir: t.TempDir(),
			Probe: func(context.Context) error { return probeErr }}
	}
	on, err := NewManager(opts(nil))
	if err != nil || !on.Enabled() {
		t.Fatalf("default with a working platform: enabled=%v err=%v", on != nil && on.Enabled(), err)
	}
	// Neither backend: fail-closed, every command refused with why and the fix.
	started := 0
	none := func(cfg string) ManagerOptions {
		o := opts(fmt.Errorf("%w (test)", errNoBwrap))
		o.ConfigPath = cfg
		o.GOOS = "linux"
		o.ProbeLandlock = func(context.Context) (int, error) { return 0, errors.New("Landlock refused (test)") }
		o.StartSession = func(context.Context, SessionOptions) (Session, error) { started++; return &fakeSession{}, nil }
		return o
	}
	writeFile(t, filepath.Join(dir, "on.json"), `{"enabled": true}`)
	for _, cfg := range []string{filepath.Join(dir, "missing.json"), filepath.Join(dir, "on.json")} {
		off, err := NewManager(none(cfg))
		if err != nil {
			t.Fatal(err)
		}
		st := off.Status()
		if !off.Enabled() || !st.Unavailable || off.Backend() != "" || !strings.Contains(st.String(), "UNAVAILABLE") {
			t.Fatalf("%s: status = %+v", cfg, st)
		}
		_, err = off.Execute(context.Background(), "echo hi", "")
		for _, want := range []string{"refused", "bwrap is required", "Landlock refused", "install bubblewrap", `"enabled": false`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: err = %v, want %q", cfg, err, want)
			}
		}
		if _, err := off.WrapArgv(Policy{}, []string{"true"}, WrapOptions{}); err == nil {
			t.Fatalf("%s: an extension process would run unsandboxed", cfg)
		}
		if started != 0 {
			t.Fatalf("%s: a shell was started", cfg)
		}
	}
	// Turned off explicitly: the command runs.
	writeFile(t, filepath.Join(dir, "off.json"), `{"enabled": false}`)
	offByUser, err := NewManager(none(filepath.Join(dir, "off.json")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := offByUser.Execute(context.Background(), "echo hi", ""); err != nil || started != 1 || offByUser.Enabled() {
		t.Fatalf("enabled false: err=%v started=%d", err, started)
	}
	// Bubblewrap cannot run, Landlock can: Landlock is chosen.
	o := none(filepath.Join(dir, "missing.json"))
	o.ProbeLandlock = func(context.Context) (int, error) { return 7, nil }
	ll, err := NewManager(o)
	if err != nil || ll.Backend() != BackendLandlock {
		t.Fatalf("backend = %q, err = %v", ll.Backend(), err)
	}
	if st := ll.Status(); st.Platform != "landlock" || st.LandlockABI != 7 || len(st.Limits) == 0 || !strings.Contains(st.String(), "Not enforced by this backend") {
		t.Fatalf("landlock status:\n%s", st)
	}
}

func TestBwrapCause(t *testing.T) {
	tests := []struct{ out, want string }{
		{"bwrap: setting up uid map: Permission denied", "user namespaces"},
		{"bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.", "user namespaces"},
		{"bwrap: Can't mount proc on /newroot/proc: Operation not permitted", "/proc cannot be mounted"},
		{"bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", "loopback"},
		{"bwrap: something else", ""},
	}
	for _, tt := range tests {
		got := bwrapCause(tt.out)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("bwrapCause(%q) = %q, want it to name %q", tt.out, got, tt.want)
		}
		if strings.Contains(tt.out, "proc") && strings.Contains(got, "user namespaces") {
			t.Errorf("bwrapCause(%q) blames user namespaces for a /proc failure", tt.out)
		}
	}
}

// TestChoiceIsRemembered: the backend the probes chose is remembered in
// the agent home's cache and the probes not run again while what decides
// them is unchanged (here: the bwrap binary, rewritten); bubblewrap and
// Landlock alike. A remembered backend that fails to start refuses the
// command, says why, and is forgotten so the next start probes again.
func TestChoiceIsRemembered(t *testing.T) {
	skipUnderLandlock(t, "the memo is of the automatic choice, probed as root here")
	requireBwrap(t)
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	fake := filepath.Join(dir, "bin", "bwrap")
	if err := os.Mkdir(filepath.Dir(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(body string) {
		t.Helper()
		tmp := fake + ".new"
		if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho run >> "+runs+"\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, fake); err != nil {
			t.Fatal(err)
		}
	}
	works, fails := `exec "`+real+`" "$@"`, `echo "bwrap: setting up uid map: Permission denied" >&2; exit 1`
	home := filepath.Join(dir, "home", ".synapse")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := ManagerOptions{
		ConfigPath: filepath.Join(home, "sandbox.json"), TempDir: t.TempDir(), GOOS: "linux",
		LookPath: func(string) (string, error) { return fake, nil }, Launcher: testLauncher(t),
		Env: []string{"PATH=" + os.Getenv("PATH")}, StartSession: realShell,
	}
	newManager := func() *Manager {
		t.Helper()
		o := opts
		o.Cwd = t.TempDir()
		m, err := NewManager(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Shutdown() })
		return m
	}
	runsSoFar := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}
	memo := filepath.Join(home, "cache", choiceMemoName)
	key := func() string { return (&Manager{opts: opts}).choiceKey() }

	script(works)
	if m := newManager(); m.Backend() != BackendBwrap || runsSoFar() != 1 {
		t.Fatalf("first start: backend %q, %d bwrap runs", m.Backend(), runsSoFar())
	}
	if c, ok := readChoice(memo, key()); !ok || c.backend != BackendBwrap {
		t.Fatalf("the choice of bubblewrap was not remembered: %+v %v", c, ok)
	}
	m := newManager()
	if m.Backend() != BackendBwrap || runsSoFar() != 1 {
		t.Fatalf("second start: backend %q, %d bwrap runs (want the memo's word)", m.Backend(), runsSoFar())
	}
	if res, err := m.Execute(context.Background(), "echo hi", ""); err != nil || res.Stdout != "hi\n" {
		t.Fatalf("a command under the remembered bubblewrap: %+v, %v", res, err)
	}

	// bwrap changed and now fails: probed again, Landlock chosen and
	// remembered with why.
	if _, err := probeLandlock(context.Background(), opts.Launcher); err != nil {
		testutil.SkipOrFail(t, "Landlock cannot sandbox here: %v", err)
	}
	script(fails)
	before := runsSoFar()
	if m := newManager(); m.Backend() != BackendLandlock || runsSoFar() != before+1 {
		t.Fatalf("bwrap failing: backend %q, %d bwrap runs since", m.Backend(), runsSoFar()-before)
	}
	m = newManager()
	if st := m.Status(); m.Backend() != BackendLandlock || runsSoFar() != before+1 || st.LandlockABI <= 0 || !strings.Contains(st.Reason, "uid map") {
		t.Fatalf("remembered Landlock: backend %q, %d bwrap runs since, status %+v", m.Backend(), runsSoFar()-before, st)
	}
	if res, err := m.Execute(context.Background(), "echo hi", ""); err != nil || res.Stdout != "hi\n" {
		t.Fatalf("a command under the remembered Landlock: %+v, %v", res, err)
	}

	// It fails now where the memo says it works: refused, said, forgotten.
	writeChoice(memo, key(), choice{backend: BackendBwrap})
	m = newManager()
	_, err = m.Execute(context.Background(), "echo hi", "")
	if err == nil || !strings.Contains(err.Error(), "not run") || !strings.Contains(err.Error(), "probe afresh") {
		t.Fatalf("a remembered bwrap that fails: err = %v", err)
	}
	if _, ok := readChoice(memo, key()); ok {
		t.Fatal("the memo of a backend that fails was kept")
	}
}

// TestPlanAheadFollowsAGrant: a grant made before the first command
// (--allow-path, a sub-agent's saved outputs or skills folder) starts the
// plan ahead again with the policy the first sandbox will have, so that
// the sandbox takes it rather than drop it and plan again.
func TestPlanAheadFollowsAGrant(t *testing.T) {
	f := newFixture(t, nil)
	extra := filepath.Join(f.tmp, "granted")
	if err := os.Mkdir(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.m.AddRuntimeWhitelist(extra); err != nil {
		t.Fatal(err)
	}
	f.m.mu.Lock()
	c, p := f.m.scan, f.m.buildPolicyLocked()
	f.m.mu.Unlock()
	if c == nil || c.ahead == nil {
		t.Fatal("no plan is made ahead")
	}
	if !slices.Contains(c.ahead.p.Whitelist, extra) || !c.matches(scanKey(p)) {
		t.Fatalf("the plan ahead is of the policy before the grant: %v", c.ahead.p.Whitelist)
	}
	mp, ok := c.takeAhead(p, f.m.opts.Env)
	if !ok {
		t.Fatal("the first sandbox would drop the plan made ahead")
	}
	mp.watch.Close()
}

// prepared waits for Prepare's creation to end.
func prepared(t *testing.T, m *Manager) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		m.mu.Lock()
		busy := m.preparing
		m.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("Prepare's creation did not end")
		}
	}
}

// Prepare creates the sandbox ahead, once, and the first command runs in
// it as if it had made it: no second creation, no note of a restart. A
// grant before that command rebuilds it, and the model, which never used
// the first shell, is not told that one was reset.
func TestPrepareCreatesTheSandboxAhead(t *testing.T) {
	for _, grant := range []bool{false, true} {
		t.Run(fmt.Sprintf("grant=%v", grant), func(t *testing.T) {
			prov := &fakeProvider{}
			m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
			m.Prepare()
			m.Prepare()
			prepared(t, m)
			m.Prepare() // it exists: nothing to do
			prepared(t, m)
			if prov.creates != 1 {
				t.Fatalf("creates = %d after Prepare, want 1", prov.creates)
			}
			want := 1
			if grant {
				if err := m.AddRuntimeWhitelist("/data"); err != nil {
					t.Fatal(err)
				}
				want = 2
			}
			res, err := m.Execute(context.Background(), "echo hi", "/workspace")
			if err != nil || res.Stdout != "ok echo hi" || res.Stderr != "" {
				t.Fatalf("res = %+v, %v", res, err)
			}
			if prov.creates != want {
				t.Fatalf("creates = %d, want %d", prov.creates, want)
			}
			// Once used, a rebuild is the model's news again.
			if err := m.AddRuntimeWhitelist("/more"); err != nil {
				t.Fatal(err)
			}
			if res, _ := m.Execute(context.Background(), "echo hi", "/workspace"); !strings.Contains(res.Stderr, "the shell was restarted") {
				t.Fatalf("after a used shell's rebuild: %+v", res)
			}
		})
	}
}

// A creation Prepare started that fails is the next command's error, as
// its own creation's would be (not a second attempt's, which can say
// less), and the command after that tries again.
func TestPrepareFailureIsTheNextCommands(t *testing.T) {
	prov := &fakeProvider{createErr: errors.New("bwrap: setting up uid map: Permission denied")}
	m, sessions := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	m.Prepare()
	prepared(t, m)
	prov.mu.Lock()
	prov.createErr = nil // works again: only the report of the failure is left
	prov.mu.Unlock()
	if _, err := m.Execute(context.Background(), "echo hi", ""); err == nil || !strings.Contains(err.Error(), "uid map") {
		t.Fatalf("err = %v, want Prepare's creation error", err)
	}
	if len(*sessions) != 0 || prov.creates != 1 {
		t.Fatalf("ran unsandboxed or created again: sessions %d creates %d", len(*sessions), prov.creates)
	}
	if res, err := m.Execute(context.Background(), "echo hi", ""); err != nil || res.Stdout != "ok echo hi" {
		t.Fatalf("the next command: %+v, %v", res, err)
	}
	// A grant after a failed Prepare: the new policy is tried, not the
	// old failure reported.
	prov.mu.Lock()
	prov.createErr = errors.New("uid map again")
	prov.mu.Unlock()
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	m.Prepare()
	prepared(t, m)
	prov.mu.Lock()
	prov.createErr = nil
	prov.mu.Unlock()
	if err := m.AddRuntimeWhitelist("/data"); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Execute(context.Background(), "echo hi", ""); err != nil || res.Stdout != "ok echo hi" {
		t.Fatalf("after a grant: %+v, %v", res, err)
	}
}

// A Prepare that Shutdown overtakes leaves no sandbox behind.
func TestPrepareThenShutdownLeavesNothing(t *testing.T) {
	for range 20 {
		prov := &fakeProvider{}
		m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
		m.Prepare()
		if err := m.Shutdown(); err != nil {
			t.Fatal(err)
		}
		prepared(t, m)
		m.mu.Lock()
		left := m.backend
		m.mu.Unlock()
		if left != nil || prov.creates != prov.destroys {
			t.Fatalf("after Shutdown: backend %v, creates %d, destroys %d", left, prov.creates, prov.destroys)
		}
	}
}

// A command that waits for Prepare's creation and is cancelled (Ctrl+C)
// ends that creation rather than wait for it under the lock it holds; the
// cancellation is not left for the next command, which creates anew.
func TestCancelledCommandEndsPrepare(t *testing.T) {
	prov := &fakeProvider{hold: make(chan struct{}), entered: make(chan struct{}, 4)}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	m.Prepare()
	<-prov.entered // the creation waits, holding the manager's lock
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Execute(ctx, "echo hi", "")
		done <- err
	}()
	cancel()
	if err := <-done; err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
	prepared(t, m)
	close(prov.hold)
	if res, err := m.Execute(context.Background(), "echo hi", ""); err != nil || res.Stdout != "ok echo hi" {
		t.Fatalf("the next command: %+v, %v", res, err)
	}
}

// Shutdown does not wait for a shell Prepare is still starting: it ends
// that start.
func TestShutdownEndsPrepare(t *testing.T) {
	prov := &fakeProvider{hold: make(chan struct{}), entered: make(chan struct{}, 1)}
	m, _ := fakeManager(t, prov, Config{Enabled: true, Provider: "fake"})
	m.Prepare()
	<-prov.entered
	if err := m.Shutdown(); err != nil { // without the cancel, this waits forever
		t.Fatal(err)
	}
	prepared(t, m)
	if m.backend != nil || prov.creates != 0 {
		t.Fatalf("backend %v, creates %d after Shutdown", m.backend, prov.creates)
	}
}
