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

// clickFeedbackScript drives the page in headless Chromium: clicking Start
// while the sandbox is unusable (and required) shows the error at once, the
// button stays visible and clickable, a retry answers again, and no session
// starts. playwright-core is loaded from web/node_modules by absolute path.
const clickFeedbackScript = `
import { createRequire } from 'module';
const [root, url, want] = process.argv.slice(2);
const require = createRequire(root + '/web/package.json');
const { chromium } = require('playwright-core');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const page = await browser.newPage();
  await page.goto(url);
  const sel = 'button.start[data-engine="codex-tui"]';
  await page.waitForSelector(sel, { timeout: 15000 });
  for (let attempt = 1; attempt <= 2; attempt++) {
    await page.click(sel);
    await page.waitForSelector('#error:not([hidden])', { timeout: 10000 });
    const err = await page.textContent('#error');
    if (!err.includes(want)) throw new Error('attempt ' + attempt + ': error box says ' + JSON.stringify(err));
    if (!(await page.isVisible(sel)) || !(await page.isEnabled(sel))) throw new Error('attempt ' + attempt + ': start button hidden or disabled');
    const status = await page.evaluate(() => document.getElementById('session-status').dataset.status || '');
    if (status === 'running') throw new Error('a session is shown running');
    // Clear the box so the retry must show it again.
    await page.evaluate(() => { const b = document.getElementById('error'); b.hidden = true; b.textContent = ''; });
  }
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  console.error('e2e: ' + e.message);
  process.exitCode = 1;
} finally {
  await browser.close();
}
`

// Seed 002 "点击后失败反馈": the user clicks Start while the engine's sandbox is
// unusable; the page shows the error at once and the button stays there for
// a retry. (The server side is TestRequireSandboxRefusesStart.)
func TestSeedClickFeedbackWhenSandboxUnavailable(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	node, chromium, root := requireBrowser(t)
	const cause = "bwrap is not installed"
	e := newTestEnv(t, withProbe(SandboxUnsupported, cause), func(o *Options) { o.RequireSandbox = true })
	script := filepath.Join(t.TempDir(), "click.mjs")
	if err := os.WriteFile(script, []byte(clickFeedbackScript), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, root, e.ts.URL+"/ui/engines?token="+testToken, cause)
	cmd.Env = append(os.Environ(), "CHROMIUM_PATH="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("e2e: %s", strings.TrimSpace(string(out)))
	if err != nil || !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("browser check failed: %v", err)
	}
	if e.srv.mgr.Active() != nil || e.srv.mgr.Latest() != nil {
		t.Fatal("a refused start left a session")
	}
	if entries, _ := os.ReadDir(e.sessionsDir()); len(entries) != 0 {
		t.Fatalf("refused starts created %d session directories", len(entries))
	}
}
