// Browser test of the /ui/engines page in headless Chromium (Debian's
// chromium driven by playwright-core). Run by internal/web's TestBrowserEndToEnd
// against a server with stand-in engines:
//
//   node web/e2e.mjs URL_WITH_TOKEN SCREENSHOT.png
//
// It opens the page (the empty terminal box shows a hint; the not-installed
// iFlow engine's Start button stays clickable, says why in its title, and a
// click shows the install line at once), starts the Codex engine, checks
// that xterm.js rendered its drawing (text, colours, cursor moves: no raw
// escape text), types and sees the echo, resizes the window and sees the new
// size reach the program, clicks another engine's Start while the session
// runs and sees the busy error at once with the button still enabled, stops
// the session and sees the end said in words, reloads and sees the ended
// session's last screen, and fails if the page requested anything outside
// the server. Prints one JSON line on success.
import { chromium } from 'playwright-core';

const [url, shot] = process.argv.slice(2);
if (!url || !shot) {
  console.error('usage: node web/e2e.mjs URL_WITH_TOKEN SCREENSHOT.png');
  process.exit(2);
}
const origin = new URL(url).origin;
const wsOrigin = origin.replace(/^http/, 'ws');
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const outside = [];
const seen = [];
function record(u) {
  seen.push(u);
  if (!(u.startsWith(origin + '/') || u.startsWith(wsOrigin + '/'))) outside.push(u);
}

function fail(msg) {
  throw new Error(msg);
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  // Block (and record) anything not addressed to the server under test.
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin + '/')) return route.continue();
    record(u);
    return route.abort();
  });
  page = await context.newPage();
  page.on('request', (r) => record(r.url()));
  page.on('websocket', (ws) => record(ws.url()));
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  await page.goto(url);
  if (new URL(page.url()).search.includes('token')) fail('the token stayed in the address bar: ' + page.url());
  await page.waitForSelector('button.start[data-engine="codex-tui"]', { timeout: 15000 });
  const labels = await page.$$eval('.engine h2', (hs) => hs.map((h) => h.firstChild.textContent));
  if (labels.join(',') !== 'Codex TUI,Gemini TUI,iFlow TUI') fail('engine labels: ' + labels);
  const hasXterm = await page.evaluate(() => typeof window.Terminal === 'function' && !!window.synapseConsole.term);
  if (!hasXterm) fail('xterm.js did not load from the server');

  // errorAfterClick clicks a Start button and waits for the error box (a
  // click is answered, never blocked in advance: seed 002); the box is
  // cleared first so that the answer must come from this click.
  async function errorAfterClick(id) {
    const sel = `button.start[data-engine="${id}"]`;
    if (!(await page.isEnabled(sel))) fail('Start of ' + id + ' is disabled: a click must be answered, not prevented');
    await page.evaluate(() => { const b = document.getElementById('error'); b.hidden = true; b.textContent = ''; });
    await page.click(sel);
    await page.waitForSelector('#error:not([hidden])', { timeout: 10000 });
    if (!(await page.isVisible(sel)) || !(await page.isEnabled(sel))) fail('after the click, Start of ' + id + ' is hidden or disabled: no retry');
    return page.textContent('#error');
  }

  // Before Start: a hint in the empty terminal box; every Start is clickable.
  if (!(await page.isVisible('#terminal-hint'))) fail('no hint in the empty terminal box before Start');
  const hint = await page.textContent('#terminal-hint');
  if (!/Start/.test(hint)) fail('terminal hint: ' + hint);
  if (!(await page.isEnabled('button.start[data-engine="codex-tui"]'))) fail('Start of the installed Codex engine is disabled');
  const iflowWhy = await page.getAttribute('button.start[data-engine="iflow-tui"]', 'title');
  if (!/not installed/.test(iflowWhy || '')) fail('the iFlow button does not say beforehand that it is not installed: ' + iflowWhy);
  // The not-installed engine answers its click with the install line.
  const missing = await errorAfterClick('iflow-tui');
  if (!/not installed/.test(missing) || !missing.includes('install the iFlow CLI so that iflow is on PATH')) fail('clicking the not-installed iFlow says: ' + missing);
  if (await page.isVisible('#session')) fail('a refused start shows a session');

  // Start: immediate feedback, then the running state.
  await page.click('button.start[data-engine="codex-tui"]');
  await page.waitForSelector('#session-status[data-status="running"]', { timeout: 15000 });
  if (await page.isVisible('#terminal-hint')) fail('the terminal hint stays over a running session');

  const bufferText = () => page.evaluate(() => {
    const b = window.synapseConsole.term.buffer.active;
    const lines = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
    return lines.join('\n');
  });
  async function waitBuffer(pred, what) {
    const end = Date.now() + 15000;
    let text = '';
    while (Date.now() < end) {
      text = await bufferText();
      if (pred(text)) return text;
      await page.waitForTimeout(50);
    }
    fail('timed out waiting for ' + what + ' in the terminal; it shows:\n' + text);
  }
  let text = await waitBuffer((t) => t.includes('STANDIN codex') && t.includes('CHILDREN-STARTED'), 'the stand-in drawing');
  if (text.includes('\x1b') || /\[\d+(;\d+)*[mHJ]/.test(text)) fail('raw escape text in the terminal:\n' + text);

  // Colours and cursor moves were interpreted: a bold green title at the top
  // left (the screen was cleared), and a box drawn at row 3, column 5.
  const cells = await page.evaluate(() => {
    const t = window.synapseConsole.term;
    const b = t.buffer.active;
    const top = b.baseY;
    const title = b.getLine(top).getCell(0);
    const box = b.getLine(top + 2);
    return {
      firstLine: b.getLine(top).translateToString(true),
      titleFg: title.getFgColor(), titleBold: title.isBold(), titleMode: title.isFgPalette(),
      boxLine: box.translateToString(true), boxBg: box.getCell(4).getBgColor(),
    };
  });
  if (!cells.firstLine.startsWith('STANDIN codex')) fail('clear screen + home not honoured; first line: ' + JSON.stringify(cells.firstLine));
  if (cells.titleFg !== 2 || !cells.titleBold || !cells.titleMode) fail('title is not bold green: ' + JSON.stringify(cells));
  if (cells.boxLine !== '    +------+' || cells.boxBg !== 4) fail('box not drawn by cursor moves with a blue background: ' + JSON.stringify(cells));

  // The handshake line reached the terminal before the program cleared it: it is in the event log.
  const events = await page.evaluate(() => window.synapseConsole.events.slice());
  if (events[0] !== 'state') fail('first protocol frame was ' + events[0] + ', not state');

  // Type and see the echo.
  await page.click('#terminal');
  await page.keyboard.type('hello from chromium');
  await page.keyboard.press('Enter');
  await waitBuffer((t) => t.includes('echo: hello from chromium'), 'the echo');

  // Resize the window: the fit add-on resizes xterm, the PTY follows, the program sees it.
  const before = await page.evaluate(() => [window.synapseConsole.term.cols, window.synapseConsole.term.rows]);
  await page.setViewportSize({ width: 900, height: 640 });
  const after = await (async () => {
    const end = Date.now() + 10000;
    while (Date.now() < end) {
      const s = await page.evaluate(() => [window.synapseConsole.term.cols, window.synapseConsole.term.rows]);
      if (s[0] !== before[0] || s[1] !== before[1]) return s;
      await page.waitForTimeout(50);
    }
    fail('xterm did not resize with the window');
  })();
  await waitBuffer((t) => t.includes(`size=${after[0]}x${after[1]}`), `size=${after[0]}x${after[1]}`);

  // While it runs every Start stays clickable: the title says beforehand
  // that a session runs, and a click shows the busy error at once, the
  // running session untouched. The server refuses a second start by itself
  // too (another tab, a script).
  const geminiWhy = await page.getAttribute('button.start[data-engine="gemini-tui"]', 'title');
  if (!/running/.test(geminiWhy || '')) fail('the Gemini button does not say beforehand that a session runs: ' + geminiWhy);
  const busyShown = await errorAfterClick('gemini-tui');
  if (!/busy/.test(busyShown) || !/stop it/.test(busyShown)) fail('clicking Gemini Start while Codex runs says: ' + busyShown);
  if ((await page.getAttribute('#session-status', 'data-status')) !== 'running') fail('the busy click disturbed the running session');
  if (!(await page.textContent('#session-title')).startsWith('Codex TUI')) fail('the busy click replaced the running session on the page');
  const busy = await page.evaluate(async () => {
    const r = await fetch('/api/sessions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ engine: 'gemini-tui' }) });
    return { status: r.status, body: await r.json() };
  });
  if (busy.status !== 409 || !/busy/.test(busy.body.error)) fail('second start while running: ' + JSON.stringify(busy));

  // Warning box when the sandbox is not supported (the page reads it from the start answer).
  const warning = await page.evaluate(() => { const w = document.getElementById('warning'); return w.hidden ? '' : w.textContent; });
  const sandbox = await page.evaluate(() => window.synapseConsole.session.sandbox_status);
  if (sandbox !== 'supported' && !warning.includes(sandbox)) fail('no warning for sandbox ' + sandbox);

  // Stop: the page shows the session ended.
  await page.click('#stop');
  await page.waitForSelector('#session-status[data-status="ended"]', { timeout: 15000 });
  const status = await page.textContent('#session-status');
  if (status.trim() !== 'Ended: stopped by you') fail('status after stop is not in words: ' + status);
  await waitBuffer((t) => t.includes('ended: stopped by you'), 'the end line');
  if (!(await page.isEnabled('button.start[data-engine="gemini-tui"]'))) fail('Start stays disabled after the session ended');

  // Reload: the ended session is shown with its last screen, not a blank box.
  await page.reload();
  await page.waitForSelector('#session-status[data-status="ended"]', { timeout: 15000 });
  const reloaded = await page.textContent('#session-status');
  if (reloaded.trim() !== 'Ended: stopped by you') fail('status after reload: ' + reloaded);
  text = await waitBuffer((t) => t.includes('echo: hello from chromium') && t.includes('ended: stopped by you'), 'the last screen after reload');
  if (/\b143\b|server_shutdown|exit code/.test(text + reloaded)) fail('raw end codes shown:\n' + text);
  if (await page.isVisible('#terminal-hint')) fail('the terminal hint covers the ended session');
  await page.waitForTimeout(200);
  await page.screenshot({ path: shot, fullPage: true });

  if (outside.length) fail('requests outside the server: ' + outside.join(', '));
  // The refused starts above are an expected 422 (not installed) and 409s
  // (busy), which Chromium logs as failed resources.
  const fatal = consoleErrors.filter((e) => !/favicon|status of (409|422)/.test(e));
  if (fatal.length) fail('console errors: ' + fatal.join(' | '));
  console.log(JSON.stringify({ ok: true, requests: seen.length, sandbox, size: after, status: status.trim() }));
} catch (e) {
  if (page) {
    try { await page.screenshot({ path: shot, fullPage: true }); } catch (_) { /* best effort */ }
  }
  console.error('e2e: ' + e.message);
  process.exitCode = 1;
} finally {
  await browser.close();
}
