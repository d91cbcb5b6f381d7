// The official Claude Agent SDK drives synapse as its executable. Run by
// TestAgentSDK (internal/cli/agentsdk_e2e_test.go), which builds synapse,
// starts a scripted Anthropic-format model server (llmtest) and sets:
//   SYNAPSE_BIN   the built binary (pathToClaudeCodeExecutable)
//   SDK_WORK_DIR  the directory the agent works in
//   SDK_TMP       scratch for the typed-consumer check
//   MCP_TEST_SERVER  the stdio MCP test server (internal/mcp/mcptest) for setMcpServers
//   ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, SYNAPSE_HOME, HOME
// The model answers by the [case:NAME] marker in the first prompt.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { query, createSdkMcpServer, tool } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = process.env.SYNAPSE_BIN;
const work = process.env.SDK_WORK_DIR;
const tmp = process.env.SDK_TMP;
if (!bin || !work || !tmp) {
  throw new Error('run through go test ./internal/cli -run TestAgentSDK (SYNAPSE_BIN, SDK_WORK_DIR, SDK_TMP unset)');
}

// Every message any case received, for the type check at the end.
const seen = [];
const stderrOf = [];

function options(extra = {}) {
  return {
    pathToClaudeCodeExecutable: bin,
    cwd: work,
    stderr: (d) => stderrOf.push(d),
    ...extra,
  };
}

async function collect(q, onMessage) {
  const msgs = [];
  for await (const m of q) {
    msgs.push(m);
    seen.push(m);
    if (onMessage) await onMessage(m, msgs);
  }
  return msgs;
}

const results = (msgs) => msgs.filter((m) => m.type === 'result');
const blocks = (msgs, type) =>
  msgs.filter((m) => m.type === 'assistant' || m.type === 'user')
    .flatMap((m) => (Array.isArray(m.message.content) ? m.message.content : []))
    .filter((b) => b.type === type);

// One user message of the streaming input.
function userMessage(text) {
  return { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null };
}

// A prompt stream whose messages are released one at a time by release().
function promptStream() {
  const waiting = [];
  let wake = null;
  let closed = false;
  return {
    push(text) { waiting.push(userMessage(text)); wake?.(); },
    close() { closed = true; wake?.(); },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (waiting.length) yield waiting.shift();
        if (closed) return;
        await new Promise((r) => { wake = r; });
        wake = null;
      }
    },
  };
}

test('a text answer', async () => {
  const msgs = await collect(query({ prompt: '[case:text] say hi', options: options() }));
  const init = msgs.find((m) => m.type === 'system' && m.subtype === 'init');
  assert.ok(init, 'system/init');
  assert.equal(init.permissionMode, 'default');
  assert.deepEqual(init.tools, ['Bash']);
  const [res] = results(msgs);
  assert.equal(res.subtype, 'success');
  assert.equal(res.result, 'hello from synapse');
  assert.equal(res.session_id, init.session_id);
  assert.ok(res.modelUsage && typeof res.modelUsage === 'object');
  for (const m of msgs) assert.match(m.uuid, /^[0-9a-f-]{36}$/, `uuid on ${m.type}`);
});

test('a tool call and its result', async () => {
  const msgs = await collect(query({ prompt: '[case:tool] run echo', options: options() }));
  const [use] = blocks(msgs, 'tool_use');
  assert.equal(use.name, 'Bash');
  assert.equal(use.input.command, 'echo tool-output-42');
  const [result] = blocks(msgs, 'tool_result');
  assert.equal(result.tool_use_id, use.id);
  assert.match(String(result.content), /tool-output-42/);
  const toolMsg = msgs.find((m) => m.type === 'assistant' && m.message.content[0].type === 'tool_use');
  assert.equal(toolMsg.message.stop_reason, 'tool_use');
  assert.equal(results(msgs)[0].result, 'the command printed tool-output-42');
});

test('multi-turn input: one result per user message, one session', async () => {
  const input = promptStream();
  input.push('[case:multi] first');
  const q = query({ prompt: input, options: options() });
  const msgs = await collect(q, (m, all) => {
    if (m.type !== 'result') return;
    if (results(all).length === 1) input.push('[case:multi] second');
    else input.close();
  });
  const rs = results(msgs);
  assert.equal(rs.length, 2);
  assert.equal(rs[0].result, 'answer to prompt 1');
  assert.equal(rs[1].result, 'answer to prompt 2');
  assert.equal(rs[0].session_id, rs[1].session_id);
});

test('resume continues the session', async () => {
  const first = await collect(query({ prompt: '[case:resume] remember 7', options: options() }));
  const sid = results(first)[0].session_id;
  const second = await collect(query({ prompt: '[case:resume] what number?', options: options({ resume: sid }) }));
  const res = results(second)[0];
  assert.equal(res.result, 'you said 7');
  assert.equal(res.session_id, sid);
});

test('partial messages stream the response, the tool input and the stop reason', async () => {
  const msgs = await collect(query({ prompt: '[case:partial] go', options: options({ includePartialMessages: true }) }));
  const kinds = msgs.map((m) => (m.type === 'stream_event' ? m.event.type : m.type === 'user' ? 'user' : null)).filter(Boolean);
  const first = kinds.indexOf('message_start');
  assert.ok(first >= 0, 'message_start');
  const events = msgs.filter((m) => m.type === 'stream_event').map((m) => m.event);
  const toolStart = events.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use');
  assert.ok(toolStart, 'a tool_use block starts');
  const json = events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' && e.index === toolStart.index)
    .map((e) => e.delta.partial_json).join('');
  assert.deepEqual(JSON.parse(json), { command: 'echo tool-output-42' });
  const delta = events.find((e) => e.type === 'message_delta');
  assert.equal(delta.delta.stop_reason, 'tool_use');
  // The tool result comes after the model's message has stopped.
  assert.ok(kinds.indexOf('message_stop') < kinds.indexOf('user'), kinds.join(' '));
  const deltas = events.filter((e) => e.type === 'message_delta').map((e) => e.delta.stop_reason);
  assert.deepEqual(deltas, ['tool_use', 'end_turn']);
});

test('interrupt() stops a running sleep 30 and the promise settles', async () => {
  const input = promptStream();
  input.push('[case:interrupt] sleep');
  const q = query({ prompt: input, options: options() });
  let interrupted;
  let asked = 0;
  const msgs = await collect(q, async (m) => {
    if (m.type === 'assistant' && m.message.content.some((b) => b.type === 'tool_use') && !interrupted) {
      asked = Date.now();
      interrupted = q.interrupt();
      await interrupted;
    }
    if (m.type === 'result') input.close();
  });
  await interrupted; // settled
  const res = results(msgs)[0];
  assert.equal(res.is_error, true);
  assert.ok(Array.isArray(res.errors) && res.errors.length > 0);
  const [result] = blocks(msgs, 'tool_result');
  assert.equal(result.is_error, true);
  assert.match(String(result.content), /interrupted/);
  console.log(`# interrupt: the result came ${Date.now() - asked} ms after interrupt()`);
});

test('canUseTool denying a command: it never runs and the model is told', async () => {
  const asked = [];
  const msgs = await collect(query({
    prompt: '[case:deny] touch it',
    options: options({
      canUseTool: async (toolName, input, opts) => {
        asked.push({ toolName, input, id: opts.toolUseID });
        return { behavior: 'deny', message: 'not on my watch' };
      },
    }),
  }));
  assert.equal(asked.length, 1);
  assert.equal(asked[0].toolName, 'Bash');
  assert.equal(asked[0].input.command, 'touch denied-marker.txt');
  assert.equal(existsSync(path.join(work, 'denied-marker.txt')), false, 'the command did not run');
  const res = results(msgs)[0];
  assert.match(res.result, /^told: .*declined/s);
  assert.equal(res.permission_denials.length, 1);
  assert.equal(res.permission_denials[0].tool_input.command, 'touch denied-marker.txt');
});

test('a PreToolUse hook callback that blocks: the command never runs and the model is told', async () => {
  const inputs = [];
  let init;
  const q = query({
    prompt: '[case:hook] touch it',
    options: options({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [async (input, toolUseID) => {
          inputs.push({ input, toolUseID });
          return { decision: 'block', reason: 'no rm' };
        }] }],
        PostToolUse: [{ matcher: 'Edit', hooks: [async () => assert.fail('an Edit matcher never fits Bash')] }],
      },
    }),
  });
  const msgs = await collect(q, async (m) => { if (m.type === 'system' && m.subtype === 'init') init = await q.initializationResult(); });
  assert.ok(init, 'initialize answered');
  assert.equal(inputs.length, 1);
  assert.equal(inputs[0].input.hook_event_name, 'PreToolUse');
  assert.equal(inputs[0].input.tool_name, 'Bash');
  assert.equal(inputs[0].input.tool_input.command, 'touch hook-marker.txt');
  assert.equal(inputs[0].toolUseID, 'call_rm');
  assert.equal(existsSync(path.join(work, 'hook-marker.txt')), false, 'the command did not run');
  assert.match(results(msgs)[0].result, /^told: .*no rm/s);
});

test("a PreToolUse hook's ask and updatedInput: the changed command is put to canUseTool, then runs", async () => {
  const asked = [];
  const msgs = await collect(query({
    prompt: '[case:hookask] touch it',
    options: options({
      permissionMode: 'acceptEdits', // a mode that would not ask about this command
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [async () => ({
          hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'hook wants a look',
            updatedInput: { command: 'echo hook-changed' } },
        })] }],
      },
      canUseTool: async (_t, input, opts) => {
        asked.push({ input, id: opts.toolUseID, reason: opts.decisionReason });
        return { behavior: 'allow', updatedInput: input };
      },
    }),
  }));
  assert.equal(asked.length, 1);
  assert.equal(asked[0].input.command, 'echo hook-changed');
  const [use] = blocks(msgs, 'tool_use');
  assert.equal(asked[0].id, use.id);
  assert.equal(existsSync(path.join(work, 'hookask-marker.txt')), false, "the model's command did not run");
  assert.match(results(msgs)[0].result, /^told: .*A PreToolUse hook changed the command to: echo hook-changed.*\nhook-changed/s);
});

test('canUseTool allowing a command: it runs', async () => {
  const msgs = await collect(query({
    prompt: '[case:allow] touch it',
    options: options({ canUseTool: async (_t, input) => ({ behavior: 'allow', updatedInput: input }) }),
  }));
  assert.equal(results(msgs)[0].result, 'done');
  assert.equal(existsSync(path.join(work, 'allowed-marker.txt')), true);
});

test('canUseTool allowing another command: that one runs, the model is told', async () => {
  const asked = [];
  const msgs = await collect(query({
    prompt: '[case:rewrite] touch it',
    options: options({
      canUseTool: async (_t, input, opts) => {
        asked.push({ input, id: opts.toolUseID });
        return { behavior: 'allow', updatedInput: { command: 'echo changed' } };
      },
    }),
  }));
  assert.equal(asked.length, 1, 'the new command asks nothing more');
  assert.equal(asked[0].input.command, 'touch rewrite-marker.txt');
  assert.equal(existsSync(path.join(work, 'rewrite-marker.txt')), false, 'the first command did not run');
  const [use] = blocks(msgs, 'tool_use');
  const results_ = blocks(msgs, 'tool_result');
  assert.equal(results_.length, 1);
  assert.equal(results_[0].tool_use_id, use.id, 'the result answers the original tool_use');
  assert.equal(asked[0].id, use.id);
  const res = results(msgs)[0];
  assert.match(res.result, /^told: .*changed the command to: echo changed/s);
  assert.match(res.result, /\nchanged/);
  assert.equal(res.permission_denials.length, 0);
});

test('a custom systemPrompt reaches the model', async () => {
  const msgs = await collect(query({ prompt: '[case:system] check', options: options({ systemPrompt: 'You are XYZZY-ORACLE.' }) }));
  assert.equal(results(msgs)[0].result, 'the system prompt reached the model');
});

test("setPermissionMode('plan') refuses a write", async () => {
  const input = promptStream();
  const q = query({ prompt: input, options: options() });
  await q.setPermissionMode('plan');
  input.push('[case:plan] write it');
  const msgs = await collect(q, (m) => { if (m.type === 'result') input.close(); });
  assert.equal(existsSync(path.join(work, 'plan-file.txt')), false, 'nothing was written');
  assert.match(results(msgs)[0].result, /plan mode/);
});

test('a failing run yields an error result the SDK parses', async () => {
  const msgs = [];
  let thrown;
  try {
    msgs.push(...await collect(query({ prompt: '[case:error] fail', options: options() })));
  } catch (e) {
    thrown = e;
  }
  const res = seen.filter((m) => m.type === 'result').at(-1);
  assert.equal(res.subtype, 'error_during_execution');
  assert.equal(res.is_error, true);
  assert.ok(res.errors.some((e) => /refuses this request/.test(e)), JSON.stringify(res.errors));
  assert.equal(thrown, undefined, `the SDK threw: ${thrown}`);
});

test('an in-process MCP server (createSdkMcpServer) serves mcp:calc:add', async () => {
  const calc = createSdkMcpServer({
    name: 'calc',
    version: '1.0.0',
    tools: [
      tool('add', 'Adds two numbers', { a: z.number(), b: z.number() },
        async ({ a, b }) => ({ content: [{ type: 'text', text: `sum: ${a + b}` }] }),
        { annotations: { readOnlyHint: true } }),
    ],
  });
  const input = promptStream();
  const q = query({ prompt: input, options: options({ mcpServers: { calc } }) });
  input.push('[case:sdkmcp] add 1 and 2');
  let status;
  const msgs = await collect(q, async (m) => {
    if (m.type === 'result') {
      status = await q.mcpServerStatus();
      input.close();
    }
  });
  const [use] = blocks(msgs, 'tool_use');
  assert.equal(use.input.command, 'mcp:calc:add --a=1 --b=2');
  assert.match(results(msgs)[0].result, /sum: 3/);
  const row = status.find((s) => s.name === 'calc');
  assert.equal(row?.status, 'connected', JSON.stringify(status));
  assert.deepEqual(row.tools.map((t) => t.name), ['add']);
});

test('a custom agent (agents option) runs as task:<name> with its own prompt', async () => {
  const q = query({
    prompt: '[case:agents] review it',
    options: options({
      agents: {
        reviewer: { description: 'Reviews code for bugs', prompt: 'You are REVIEWER-XYZ', tools: ['Read'] },
        elsewhere: { description: 'Runs on a model no provider here serves', prompt: 'You are ELSEWHERE', model: 'gpt-9-nope' },
      },
    }),
  });
  const stderrBefore = stderrOf.length;
  let agents;
  const msgs = await collect(q, async (m) => { if (m.type === 'system' && m.subtype === 'init') agents = await q.supportedAgents(); });
  const init = msgs.find((m) => m.type === 'system' && m.subtype === 'init');
  assert.ok(init.agents.includes('reviewer'), JSON.stringify(init.agents));
  assert.ok(init.agents.includes('explore'), 'the built-in types stay');
  const info = agents.find((a) => a.name === 'reviewer');
  assert.equal(info?.description, 'Reviews code for bugs');
  assert.equal(agents.find((a) => a.name === 'elsewhere')?.model, 'inherit');
  assert.match(stderrOf.slice(stderrBefore).join(''), /agent elsewhere: model gpt-9-nope is not available/);
  const [use] = blocks(msgs, 'tool_use');
  assert.match(use.input.command, /^task:reviewer /);
  // The scripted model answers so only to a request whose system prompt is the agent's.
  assert.match(results(msgs)[0].result, /^told: .*reviewed under REVIEWER-XYZ/s);
});

test('an invalid agent definition fails initialize, naming the agent and the field', async () => {
  const q = query({
    prompt: '[case:text] hi',
    options: options({ agents: { broken: { description: 'no prompt here' } } }),
  });
  await assert.rejects(q.initializationResult(), /agent "broken": prompt is missing/);
  try { for await (const _ of q) { /* drain */ } } catch { /* the SDK may end the query with the same error */ }
});

test('setMcpServers adds a stdio server whose tool is callable, and removes it again', async () => {
  const input = promptStream();
  const q = query({ prompt: input, options: options() });
  const added = await q.setMcpServers({ echo: { type: 'stdio', command: process.env.MCP_TEST_SERVER } });
  assert.deepEqual(added, { added: ['echo'], removed: [], errors: {} });
  input.push('[case:mcpset] echo it');
  let status;
  let removed;
  const msgs = await collect(q, async (m) => {
    if (m.type !== 'result') return;
    status = await q.mcpServerStatus();
    removed = await q.setMcpServers({});
    input.close();
  });
  const [use] = blocks(msgs, 'tool_use');
  assert.equal(use.input.command, 'mcp:echo:echo --text=set-servers-42');
  assert.match(results(msgs)[0].result, /^told: .*set-servers-42/s);
  const row = status.find((s) => s.name === 'echo');
  assert.equal(row?.status, 'connected', JSON.stringify(status));
  assert.ok(row.tools.some((t) => t.name === 'echo'));
  assert.deepEqual(removed, { added: [], removed: ['echo'], errors: {} });
});

test('setMcpServers adds an in-process server (createSdkMcpServer) at run time', async () => {
  const calc = createSdkMcpServer({
    name: 'calc',
    version: '1.0.0',
    tools: [tool('add', 'Adds two numbers', { a: z.number(), b: z.number() },
      async ({ a, b }) => ({ content: [{ type: 'text', text: `late sum: ${a + b}` }] }))],
  });
  const input = promptStream();
  const q = query({ prompt: input, options: options() });
  assert.deepEqual(await q.setMcpServers({ calc }), { added: ['calc'], removed: [], errors: {} });
  input.push('[case:sdkmcp] add 1 and 2');
  const msgs = await collect(q, (m) => { if (m.type === 'result') input.close(); });
  assert.match(results(msgs)[0].result, /late sum: 3/);
});

test('unknown control requests are answered with an error, not silence', async () => {
  const input = promptStream();
  const q = query({ prompt: input, options: options() });
  const status = await q.mcpServerStatus();
  assert.ok(Array.isArray(status));
  await assert.rejects(q.setMaxThinkingTokens(1000), /unsupported control request/);
  input.close();
  for await (const _ of q) { /* drain */ }
});

// Every message the cases received satisfies the SDK's types: a typed
// consumer is written with them and checked by tsc --noEmit. Synapse's own
// system subtypes are extras the SDK's union does not list.
after(() => {
  const known = new Set(['init', 'compact_boundary']);
  const typed = seen.filter((m) => m.type !== 'system' || known.has(m.subtype));
  const dir = path.join(tmp, 'typed');
  mkdirSync(dir, { recursive: true });
  const lines = [
    "import type { SDKMessage } from '@anthropic-ai/claude-agent-sdk';",
    '// Each object is a message as synapse sent it; check() holds it to the',
    "// SDK's union (required fields, literal kinds, field types).",
    'function check<T extends SDKMessage>(m: T): T { return m; }',
    'export function consume(m: SDKMessage): string {',
    "  switch (m.type) {",
    "    case 'result': return m.subtype === 'success' ? m.result : m.errors.join('; ');",
    "    case 'assistant': return m.message.content.map((b) => b.type).join(',') + String(m.message.stop_reason);",
    "    default: return m.uuid;",
    '  }',
    '}',
    ...typed.map((m) => `consume(check(${JSON.stringify(m)}));`),
  ];
  writeFileSync(path.join(dir, 'consumer.ts'), lines.join('\n') + '\n');
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler',
      types: [], typeRoots: [path.join(here, 'node_modules', '@types')], skipLibCheck: true,
      baseUrl: '.', paths: { '*': [path.join(here, 'node_modules', '*')] },
    },
    files: ['consumer.ts'],
  }));
  const tsc = path.join(here, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
  } catch (e) {
    console.error(e.stdout || e.message);
    throw new Error(`synapse's messages do not satisfy the SDK's types (tsc --noEmit on ${dir}/consumer.ts)`);
  }
  console.log(`# tsc --noEmit: ${typed.length} messages satisfy the SDK's types`);
});
