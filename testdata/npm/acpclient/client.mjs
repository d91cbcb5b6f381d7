// An editor driving `synapse acp` through the official ACP client library
// (@agentclientprotocol/sdk), for internal/cli's TestACPOfficialClient.
//
//   node client.mjs <synapse binary> <project dir>
//
// Connection 1: initialize, session/new, a prompt whose tool call edits a
// file, a prompt whose command is cancelled once its first line shows.
// Connection 2 (a new process): session/load of that session.
// Prints one JSON object: the session id, the stop reasons, and every
// session/update each connection received, in order.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [bin, cwd] = process.argv.slice(2);
if (!bin || !cwd) {
  console.error("usage: node client.mjs <synapse binary> <project dir>");
  process.exit(2);
}

// connect starts `synapse acp` and runs op with a client context; updates
// are appended to the list as they arrive.
async function connect(updates, onUpdate, op) {
  const child = spawn(bin, ["acp"], { cwd, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const app = acp
    .client({ name: "synapse-test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
      onUpdate?.(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" } }));
  let result;
  try {
    result = await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      return op(ctx, init);
    });
  } finally {
    child.stdin.end();
  }
  const exit = await exited;
  return { result, exit };
}

const out = { stopReasons: [], live: [], load: [] };

// Connection 1: the live run.
let cancelSent = false;
let session;
let ctx1;
await connect(
  out.live,
  (n) => {
    // Cancel the sleeping command once its first line is on screen.
    const u = n.update;
    if (!cancelSent && u.sessionUpdate === "tool_call_update" && u.status === "in_progress" &&
        JSON.stringify(u.content ?? []).includes("started")) {
      cancelSent = true;
      ctx1.notify(acp.methods.agent.session.cancel, { sessionId: n.sessionId });
    }
  },
  async (ctx, init) => {
    ctx1 = ctx;
    out.loadSession = init.agentCapabilities?.loadSession === true;
    const s = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    session = s.sessionId;
    for (const text of ["fix the greeting", "wait for it"]) {
      const r = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session,
        prompt: [{ type: "text", text }],
      });
      out.stopReasons.push(r.stopReason);
    }
  },
);
out.sessionId = session;

// Connection 2: another editor window loads the session.
await connect(out.load, null, async (ctx) => {
  await ctx.request(acp.methods.agent.session.load, { sessionId: session, cwd, mcpServers: [] });
});

process.stdout.write(JSON.stringify(out) + "\n");
