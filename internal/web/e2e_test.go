package web

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrowserEndToEnd drives the page in headless Chromium with
// web/e2e.mjs (playwright-core): the hint in the empty box, a missing
// engine's Start clickable and answered with its install line, start an
// engine, see its drawing rendered by xterm.js, type, resize, another
// engine's Start answered with the busy error (still enabled) while it runs, stop, see the end in
// words, reload and see its last screen, and no request outside the server. Set SYNAPSE_E2E_SCREENSHOT_DIR to keep the
// screenshots. It skips when node, chromium or web/node_modules is missing,
// except under CI.
func TestBrowserEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	node, chromium, root := requireBrowser(t)
	script := filepath.Join(root, "web", "e2e.mjs")
	cases := []struct {
		name string
		opts []serverOpt
	}{
		// The real sandbox where bubblewrap works (the page shows no warning) …
		{"sandbox", []serverOpt{withRealSandbox()}},
		// … and a probe that says unsupported (the page must show the warning box).
		{"unsupported", []serverOpt{withProbe(SandboxUnsupported, "bubblewrap cannot create namespaces here")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "sandbox" {
				requireTool(t, "bwrap")
			}
			// iFlow is left off PATH: its Start click must say how to install it.
			bin := t.TempDir()
			for _, name := range []string{"codex", "gemini", "standin.sh"} {
				if err := os.Symlink(filepath.Join(standinBin(t), name), filepath.Join(bin, name)); err != nil {
					t.Fatal(err)
				}
			}
			e := newTestEnv(t, append(tc.opts, func(o *Options) { o.Env[0] = "PATH=" + bin + ":/usr/bin:/bin" })...)
			if !e.srv.AssetsPresent() {
				if os.Getenv("CI") == "true" {
					t.Fatal("xterm.js was not embedded: run scripts/web-assets.sh before go test")
				}
				t.Skip("xterm.js is not embedded in this build: run scripts/web-assets.sh")
			}
			shot := filepath.Join(t.TempDir(), "console.png")
			if dir := os.Getenv("SYNAPSE_E2E_SCREENSHOT_DIR"); dir != "" {
				shot = filepath.Join(dir, "console-"+tc.name+".png")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, e.ts.URL+"/ui/engines?token="+testToken, shot)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CHROMIUM_PATH="+chromium)
			out, err := cmd.CombinedOutput()
			t.Logf("e2e: %s", strings.TrimSpace(string(out)))
			if err != nil {
				t.Fatalf("browser test failed (screenshot: %s): %v", shot, err)
			}
			if !strings.Contains(string(out), `"ok":true`) {
				t.Fatalf("browser test gave no success line")
			}
			if st := e.srv.mgr.Latest(); st == nil || st.State().Status != StatusEnded {
				t.Fatalf("after the browser stopped it, the session is %+v", st)
			}
		})
	}
}

// requireBrowser finds node, Debian's chromium (or $CHROMIUM_PATH) and the
// repository root with web/node_modules/playwright-core installed. It skips
// when one is missing, except under CI where it fails.
func requireBrowser(t *testing.T) (node, chromium, root string) {
	t.Helper()
	node = requireTool(t, "node")
	chromium = os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is required under CI: %v", err)
		}
		t.Skipf("chromium is not installed (%v): apt-get install chromium", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "web", "node_modules", "playwright-core")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("web/node_modules/playwright-core is missing under CI: run scripts/web-assets.sh: %v", err)
		}
		t.Skip("web/node_modules is missing: run scripts/web-assets.sh (npm ci in web/)")
	}
	return node, chromium, root
}
