// Synapse console: the /ui/engines page. Talks only to this server: the
// JSON API under /api and one WebSocket per attached terminal.
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const ACK_EVERY = 64 * 1024; // acknowledge processed output in batches
  const encoder = new TextEncoder();

  const ui = {
    term: null,
    fit: null,
    ws: null,
    session: null, // last known SessionState
    ended: false,
    starting: false, // the label of the engine whose start request is in flight
    engines: [], // from /api/engines
    pendingAck: 0,
    ackTimer: null,
    reconnectTimer: null,
    reconnectDelay: 500,
    events: [], // protocol events, for tests and debugging
  };
  window.synapseConsole = ui;

  function showError(msg) {
    const box = $('error');
    box.textContent = msg;
    box.hidden = !msg;
  }
  function showWarning(msg) {
    const box = $('warning');
    box.textContent = msg;
    box.hidden = !msg;
  }
  // sentence ends msg with a full stop (its first word may be a command, so
  // it is not capitalised).
  function sentence(msg) {
    msg = String(msg || '').trim();
    if (!msg) return '';
    return /[.!?]$/.test(msg) ? msg : msg + '.';
  }
  function feedback(msg) { $('feedback').textContent = msg || ''; }

  async function api(method, path, body) {
    const init = { method, credentials: 'same-origin', headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      return { ok: false, status: 0, data: { error: 'cannot reach the Synapse server (' + e.message + '); is `synapse serve` still running?' } };
    }
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (res.status === 401) {
      data = { error: 'not signed in: open the URL printed by `synapse serve` (it carries the access token)' };
    }
    return { ok: res.ok, status: res.status, data: data || {} };
  }

  // ---- terminal -------------------------------------------------------

  function initTerminal() {
    const el = $('terminal');
    if (typeof window.Terminal !== 'function') {
      el.innerHTML = '';
      const p = document.createElement('div');
      p.className = 'missing';
      p.textContent = 'The terminal (xterm.js) is missing from this build of Synapse, so engine output cannot be shown. Rebuild with `make build` (it runs scripts/web-assets.sh, which installs xterm.js from npm into internal/web/static/vendor).';
      el.appendChild(p);
      showError('xterm.js is missing from this build: run `make web-assets` and rebuild Synapse.');
      return;
    }
    const term = new window.Terminal({
      cursorBlink: true,
      convertEol: false,
      scrollback: 5000,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, monospace',
      fontSize: 14,
      lineHeight: 1.1, // at 1.0 the DOM renderer clips underscores below the cell
      theme: { background: '#000000' },
    });
    ui.term = term;
    if (window.FitAddon && typeof window.FitAddon.FitAddon === 'function') {
      ui.fit = new window.FitAddon.FitAddon();
      term.loadAddon(ui.fit);
    }
    term.open(el);
    fitTerminal();
    term.onData((d) => sendInput(encoder.encode(d)));
    term.onBinary((d) => {
      const b = new Uint8Array(d.length);
      for (let i = 0; i < d.length; i++) b[i] = d.charCodeAt(i) & 0xff;
      sendInput(b);
    });
    term.onResize(({ cols, rows }) => sendJSON({ type: 'resize', cols, rows }));
    new ResizeObserver(() => fitTerminal()).observe(el);
    window.addEventListener('resize', fitTerminal);
  }

  function fitTerminal() {
    if (!ui.fit) return;
    try { ui.fit.fit(); } catch (e) { /* not visible yet */ }
  }

  function termSize() {
    return ui.term ? { cols: ui.term.cols, rows: ui.term.rows } : { cols: 100, rows: 30 };
  }

  function sendInput(bytes) {
    if (ui.ws && ui.ws.readyState === WebSocket.OPEN && !ui.ended) ui.ws.send(bytes);
  }
  function sendJSON(msg) {
    if (ui.ws && ui.ws.readyState === WebSocket.OPEN) ui.ws.send(JSON.stringify(msg));
  }

  function flushAck() {
    if (ui.ackTimer) { clearTimeout(ui.ackTimer); ui.ackTimer = null; }
    if (ui.pendingAck > 0) {
      sendJSON({ type: 'ack', bytes: ui.pendingAck });
      ui.pendingAck = 0;
    }
  }
  function ack(n) {
    ui.pendingAck += n;
    if (ui.pendingAck >= ACK_EVERY) flushAck();
    else if (!ui.ackTimer) ui.ackTimer = setTimeout(flushAck, 20);
  }

  function attach(session) {
    clearTimeout(ui.reconnectTimer);
    if (ui.ws) { ui.ws.onclose = null; ui.ws.close(); }
    ui.session = session;
    ui.ended = session.status === 'ended';
    ui.pendingAck = 0;
    renderSession();
    // The server replays recent output, an ended session's last screen included.
    if (ui.term) ui.term.reset();
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(proto + '//' + location.host + '/api/sessions/' + encodeURIComponent(session.id) + '/terminal');
    ws.binaryType = 'arraybuffer';
    ui.ws = ws;
    ws.onopen = () => {
      ui.reconnectDelay = 500;
      const { cols, rows } = termSize();
      sendJSON({ type: 'resize', cols, rows });
      if (ui.term) ui.term.focus();
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === 'string') {
        let msg;
        try { msg = JSON.parse(ev.data); } catch (e) { return; }
        ui.events.push(msg.type);
        if (msg.type === 'state') {
          ui.session = msg.session;
          ui.ended = msg.session.status === 'ended';
          renderSession();
        } else if (msg.type === 'exit') {
          ui.session = msg.session;
          ui.ended = true;
          renderSession();
        }
        return;
      }
      const bytes = new Uint8Array(ev.data);
      if (ui.term) ui.term.write(bytes, () => ack(bytes.length));
      else ack(bytes.length);
    };
    ws.onclose = (ev) => {
      if (ui.ws !== ws) return;
      ui.ws = null;
      if (ui.ended) return;
      if (ev.code === 4001) {
        feedback('This terminal was opened in another window. Reload to take it back.');
        return;
      }
      feedback('Connection to the terminal lost; reconnecting…');
      ui.reconnectTimer = setTimeout(reconnect, ui.reconnectDelay);
      ui.reconnectDelay = Math.min(ui.reconnectDelay * 2, 8000);
    };
  }

  async function reconnect() {
    const r = await api('GET', '/api/sessions/current');
    const s = r.ok && r.data.session;
    if (s && ui.session && s.id === ui.session.id) {
      feedback('');
      attach(s);
    } else if (!r.ok) {
      ui.reconnectTimer = setTimeout(reconnect, ui.reconnectDelay);
      ui.reconnectDelay = Math.min(ui.reconnectDelay * 2, 8000);
    }
  }

  // ---- page -----------------------------------------------------------

  function renderSession() {
    const s = ui.session;
    const box = $('session');
    renderButtons();
    $('terminal-hint').hidden = !!s;
    if (!s) { box.hidden = true; return; }
    box.hidden = false;
    $('session-title').textContent = s.label + ' · session ' + s.id;
    const st = $('session-status');
    if (s.status === 'ended') {
      st.textContent = 'Ended: ' + (s.end_summary || 'the program ended');
      st.className = 'status ended';
    } else {
      st.textContent = 'Running';
      st.className = 'status running';
    }
    st.dataset.status = s.status;
    $('session-sandbox').textContent = 'sandbox: ' + s.sandbox_status;
    $('session-dir').textContent = 'working directory: ' + s.session_dir;
    $('stop').disabled = s.status === 'ended';
  }

  // renderButtons keeps every Start button clickable (seed 002: feedback
  // after the click, never a button disabled in advance); its title says
  // beforehand why a click would be refused. The server decides: what the
  // page knows may be stale (another tab, an engine installed meanwhile).
  function renderButtons() {
    const running = ui.session && ui.session.status === 'running';
    for (const e of ui.engines) {
      const b = document.querySelector('button.start[data-engine="' + e.id + '"]');
      if (!b) continue;
      let why = '';
      if (!e.installed) why = e.label + ' is not installed: ' + e.install;
      else if (running) why = 'A session is running: stop it before starting another';
      b.disabled = false;
      b.title = why;
    }
  }

  async function start(engine, button) {
    if (ui.starting) {
      // Answered here: a second request would only race the first.
      feedback('Still starting ' + ui.starting + '; wait for it, then try again.');
      return;
    }
    showError('');
    feedback('Starting ' + engine.label + '…');
    ui.starting = engine.label;
    const { cols, rows } = termSize();
    const r = await api('POST', '/api/sessions', { engine: engine.id, cols, rows });
    ui.starting = false;
    if (!r.ok) {
      feedback('');
      let msg = r.data.error || ('starting ' + engine.label + ' failed (HTTP ' + r.status + ')');
      showError(msg);
      if (r.data.sandbox && r.data.sandbox.status !== 'supported') {
        showWarning('Sandbox ' + r.data.sandbox.status + ': ' + r.data.sandbox.message);
      }
      button.focus();
      return;
    }
    feedback(engine.label + ' started.');
    showWarning(r.data.warning || '');
    attach(r.data.session);
  }

  async function stop() {
    if (!ui.session) return;
    showError('');
    feedback('Stopping…');
    const r = await api('POST', '/api/sessions/' + encodeURIComponent(ui.session.id) + '/stop', {});
    if (!r.ok) {
      feedback('');
      showError(r.data.error || ('stopping failed (HTTP ' + r.status + ')'));
      return;
    }
    ui.session = r.data.session;
    ui.ended = r.data.session.status === 'ended';
    feedback(ui.ended ? 'Session ended.' : 'Stop requested.');
    renderSession();
  }

  function renderEngines(engines) {
    ui.engines = engines;
    const box = $('engines');
    box.innerHTML = '';
    for (const e of engines) {
      const card = document.createElement('div');
      card.className = 'engine';
      card.dataset.engine = e.id;
      const h = document.createElement('h2');
      h.textContent = e.label;
      const badge = document.createElement('span');
      badge.className = 'badge ' + (e.installed ? 'ok' : 'missing');
      badge.textContent = e.installed ? 'installed' : 'not installed';
      h.appendChild(badge);
      const cmd = document.createElement('div');
      cmd.className = 'cmd';
      cmd.textContent = e.installed ? e.path : e.command;
      card.append(h, cmd);
      if (!e.installed) {
        const hint = document.createElement('div');
        hint.className = 'hint';
        hint.textContent = 'Not found on PATH. ' + sentence(e.install);
        card.appendChild(hint);
      }
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'start';
      b.dataset.engine = e.id;
      b.textContent = 'Start in embedded terminal';
      b.addEventListener('click', () => start(e, b));
      card.appendChild(b);
      box.appendChild(card);
    }
    renderButtons();
  }

  async function load() {
    initTerminal();
    $('stop').addEventListener('click', stop);
    const r = await api('GET', '/api/engines');
    if (!r.ok) {
      $('engines').textContent = '';
      showError(r.data.error || ('cannot load the engines (HTTP ' + r.status + ')'));
      return;
    }
    renderEngines(r.data.engines || []);
    if (r.data.assets && !r.data.assets.xterm) {
      showError('xterm.js is missing from this build: run `make web-assets` and rebuild Synapse.');
    }
    const sb = r.data.sandbox;
    if (sb && sb.status !== 'supported') {
      showWarning('Sandbox ' + sb.status + ': ' + sentence(sb.message) + ' Engines still start, without the write boundary.');
    }
    const s = r.data.session;
    // A running session is attached; an ended one too, to show its last screen.
    if (s) attach(s);
  }

  load();
})();
