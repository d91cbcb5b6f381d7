package web

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// fakeNpmInstall lays out what `npm i --prefix prefix @openai/codex` makes:
// node_modules/.bin/codex is a symlink to the package's launcher, which runs
// the platform binary from a sibling package (an optional dependency).
func fakeNpmInstall(t testing.TB, prefix string) (bin string) {
	t.Helper()
	nm := filepath.Join(prefix, "node_modules")
	files := map[string]string{
		"@openai/codex/package.json": `{"name":"@openai/codex","bin":{"codex":"bin/codex.js"}}`,
		"@openai/codex/bin/codex.js": `#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
native="$here/../../codex-linux-x64/vendor/codex"
if [ ! -x "$native" ]; then echo "Missing optional dependency @openai/codex-linux-x64"; exit 1; fi
exec "$native"
`,
		"@openai/codex-linux-x64/package.json": `{"name":"@openai/codex-linux-x64"}`,
		"@openai/codex-linux-x64/vendor/codex": "#!/bin/sh\necho PLATFORM-BINARY-RAN\nexec cat\n",
	}
	for name, body := range files {
		p := filepath.Join(nm, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin = filepath.Join(nm, ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@openai/codex/bin/codex.js", filepath.Join(bin, "codex")); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestInstallRoots(t *testing.T) {
	base := t.TempDir()
	bin := fakeNpmInstall(t, filepath.Join(base, "x"))
	global := filepath.Join(base, "g")
	fakeNpmInstall(t, filepath.Join(global, "lib"))
	if err := os.MkdirAll(filepath.Join(global, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/node_modules/@openai/codex/bin/codex.js", filepath.Join(global, "bin", "codex")); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(base, "plain", "bin")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, argv0 string
		want        []string
	}{
		{"npm i --prefix: the whole node_modules", filepath.Join(bin, "codex"),
			[]string{filepath.Join(base, "x", "node_modules")}},
		{"npm i -g --prefix: bin/ and lib/node_modules", filepath.Join(global, "bin", "codex"),
			[]string{filepath.Join(global, "bin"), filepath.Join(global, "lib", "node_modules")}},
		{"a plain binary: its directory", filepath.Join(plain, "codex"), []string{plain}},
		{"outside the directory: nothing", "/usr/bin/codex", nil},
	}
	for _, tt := range tests {
		if got := installRoots(tt.argv0, base); !slices.Equal(got, tt.want) {
			t.Errorf("%s: installRoots = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// An engine installed with `npm i --prefix /tmp/x` runs under the real
// sandbox, whose private /tmp would otherwise hide the optional dependency
// its launcher needs ("Missing optional dependency").
func TestEngineInstalledUnderTmpRunsSandboxed(t *testing.T) {
	requireTool(t, "bwrap")
	prefix, err := os.MkdirTemp("/tmp", "synapse-npm-prefix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(prefix) })
	bin := fakeNpmInstall(t, prefix)
	e := newTestEnvAt(t, outsideTmp(t), withRealSandbox(), func(o *Options) {
		o.Env[0] = "PATH=" + bin + ":/usr/bin:/bin"
	})
	if r := e.srv.mgr.sandboxStatus(context.Background()); r.Status != SandboxSupported {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sandbox probe under CI: %+v", r)
		}
		t.Skipf("bubblewrap does not work here: %s", r.Message)
	}
	st := e.start("codex-tui")
	if st.SandboxStatus != SandboxSupported {
		t.Fatalf("sandbox_status = %q", st.SandboxStatus)
	}
	c := e.dial(st.ID)
	c.waitOutputAny("PLATFORM-BINARY-RAN", "Missing optional dependency", "ended:")
	if !strings.Contains(c.out.String(), "PLATFORM-BINARY-RAN") {
		t.Fatalf("the engine under /tmp did not run its platform binary:\n%q", c.out.String())
	}
	e.stop(st.ID)
}
