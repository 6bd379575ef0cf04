// session-tools for OpenClaw: the tools session-tools__sessions_list,
// session-tools__sessions_read, session-tools__sessions_send and
// session-tools__sessions_claim, answered by host-shim, the hand-over of messages other
// sessions send, and a check before each file write (write, edit, apply_patch) that
// keeps it out of other sessions' claims.
// Written by `host-shim setup openclaw` (with its entry in openclaw.json, whose
// `config` names the command); `host-shim setup openclaw --remove` takes both out.
//
// OpenClaw's own tools hold the names sessions_list and sessions_send, and a plugin
// cannot take them over, so ours carry the prefix OpenClaw itself gives an MCP
// server's tools: `<server>__<tool>`, server `session-tools`.
//
// One `host-shim mcp` child per OpenClaw process speaks JSON-RPC on its stdio, started
// at the first call or prompt. Each tool call carries the calling session as OpenClaw
// gives it to the tool's factory (sessionId, a subagent's own inside a subagent) and
// the model's call id, in `_meta`, where the model cannot write. Before each prompt
// (`before_prompt_build`) the plugin tells the child the session runs here (live) and
// adds what waits for it to the prompt (OpenClaw 2026.9.6 does not keep that text: the
// hand-over is the plugin's word). In a gateway, a session whose turn ended is idle:
// when a message waits for one, the plugin takes it and starts a turn of the session
// through the gateway with it as the turn's message (`openclaw agent --session-id …
// --message-file <frames>`, a file only this user reads, gone when the command ends:
// a command line is every local user's to see), which OpenClaw records, so the
// session's own record confirms the hand-over (a turn that never starts leaves the
// message to be offered again). A
// message the gateway gets so for a session at work waits for the running turn to
// end: 2026.9.6 steers no message that comes this way, so a `steer` message, too, is
// given when the turn ends.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const PREFIX = "session-tools__";
// The tools that write files, and the command that asks before each call whether the
// session may write those files now (another session's claim may cover them).
const WRITING = new Set(["write", "edit", "apply_patch"]);
const WRITE_HOOK = "openclaw-write-hook";

/* __SESSION_TOOLS_PLUGIN__ */

// The long-lived gateway, not a one-turn `openclaw agent --local`.
const IN_GATEWAY = process.title === "openclaw-gateway";

/** The tools as the plugin's catalog gives them (the server's `--settings` and
 * `--plugin`, if any, apply): read once per command and arguments (OpenClaw registers
 * a plugin more than once in one process). */
const catalogs = new Map();
function catalog(config) {
  const key = JSON.stringify([config.command, config.args]);
  if (!catalogs.has(key)) catalogs.set(key, readCatalog(config));
  return catalogs.get(key);
}

function readCatalog({ command, args }) {
  const given = ["--settings", "--plugin"].flatMap((flag) => {
    const at = args.indexOf(flag);
    return at >= 0 ? args.slice(at, at + 2) : [];
  });
  const out = spawnSync(command, ["catalog", ...given], { encoding: "utf8", timeout: 60_000 });
  if (out.error) throw new Error(`cannot run ${command}: ${out.error.message}; run host-shim setup openclaw again`);
  if (out.status !== 0) throw new Error(`host-shim catalog failed: ${out.stderr.trim()}; run host-shim doctor`);
  return JSON.parse(out.stdout);
}

let host = null;

// The sessions this process runs: "busy", "idle" or "starting" (a turn asked for), and
// each one's agent.
const sessions = new Map();
// Starts the wait again (a session's moment changed); none before the first wait.
let nudge = null;

/** The session's moment now; a change ends the wait, which starts again with it. */
function moment(sessionId, agentId, now) {
  const was = sessions.get(sessionId)?.now;
  sessions.set(sessionId, { now, agentId: agentId ?? sessions.get(sessionId)?.agentId });
  if (was !== now) nudge?.();
}

/** Takes what waits for an idle session and starts a turn of it through the gateway
 * (`openclaw agent`, with the gateway's own Node and OpenClaw) whose message it is. A
 * turn that does not start within two minutes leaves the session idle (what it was to
 * carry is offered again once the record does not show it). */
async function startTurn(sessionId, logger) {
  const { agentId } = sessions.get(sessionId) ?? {};
  moment(sessionId, agentId, "starting");
  let answer = null;
  try {
    answer = await host.call("session-tools/hand-over", { sessionID: sessionId, moment: "idle" });
  } finally {
    // Nothing to give (another hand-over took it first), or the child did not answer.
    if (!answer?.text) moment(sessionId, agentId, "idle");
  }
  if (!answer?.text) return;
  let folder = null;
  const gone = () => folder && rmSync(folder, { recursive: true, force: true });
  try {
    folder = mkdtempSync(join(tmpdir(), "session-tools-message-"));
    const file = join(folder, "message.txt");
    writeFileSync(file, answer.text, { mode: 0o600 });
    const args = [process.argv[1], "agent", "--session-id", sessionId, "--message-file", file];
    if (agentId) args.push("--agent", agentId);
    const child = spawn(process.execPath, args, { detached: true, stdio: "ignore" });
    child.on("exit", gone);
    child.on("error", (err) => {
      gone();
      logger.error?.(`session-tools: cannot start a turn of ${sessionId}: ${err.message}`);
    });
    child.unref();
  } catch (err) {
    // The message stays an offer; the record not showing it, it is offered again.
    gone();
    logger.error?.(`session-tools: cannot start a turn of ${sessionId}: ${err.message}`);
  }
  setTimeout(() => {
    if (sessions.get(sessionId)?.now === "starting") moment(sessionId, agentId, "idle");
  }, 120_000).unref?.();
}

/** One wait at a time for every idle session here: a message for one starts its turn. */
function watch(logger) {
  nudge ??= host.watch(
    () => [...sessions].filter(([, s]) => s.now === "idle").map(([sessionID]) => ({ sessionID, moment: "idle" })),
    (sessionId) => startTurn(sessionId, logger),
    (err) => logger.error?.(`session-tools: waiting for messages: ${err.message}`),
  );
}

export default {
  id: "session-tools",
  name: "Session tools",
  description: "sessions_list, sessions_read, sessions_send and sessions_claim across the sessions of every harness here, and claims kept by its writes",
  register(api) {
    const config = api.pluginConfig ?? {};
    if (typeof config.command !== "string" || !Array.isArray(config.args)) {
      api.logger.error?.("session-tools: plugins.entries.session-tools.config has no command and args; run host-shim setup openclaw");
      return;
    }
    // The child ends with this process; it never keeps OpenClaw running. What it says on
    // stderr goes to OpenClaw's log.
    const started = () =>
      (host ??= new Host(config, { name: "openclaw", title: "OpenClaw", detached: true }, (line) => api.logger.info?.(line)));
    const opened = async (sessionId, busy) => {
      await started().call("session-tools/open", { sessionID: sessionId, busy });
    };

    for (const spec of catalog(config)) {
      const name = PREFIX + spec.name;
      api.registerTool(
        (context) => ({
          name,
          label: spec.annotations?.title ?? spec.name,
          description: spec.description,
          parameters: spec.input_schema,
          async execute(toolCallId, params) {
            const sessionId = context.sessionId;
            if (!sessionId) {
              return { content: [{ type: "text", text: `${name} refused: OpenClaw named no calling session for this call, so no session can be read or messaged from it.` }] };
            }
            // A send may await its reply for up to await_reply_seconds.
            const awaits = Number.isFinite(params?.await_reply_seconds) ? params.await_reply_seconds : 0;
            const result = await started().call(
              "tools/call",
              {
                name: spec.name,
                arguments: params ?? {},
                _meta: { "openclaw/sessionId": sessionId, "openclaw/toolCallId": toolCallId ?? "" },
              },
              { seconds: 120 + Math.min(Math.max(awaits, 0), 3600) },
            );
            const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
            return { content: [{ type: "text", text }], details: { refused: Boolean(result.isError) } };
          },
        }),
        { name },
      );
    }

    // Before each prompt: the session runs in this process, and what waits for it is
    // added to the prompt (OpenClaw gives the model that text; 2026.9.6 does not keep
    // it in the transcript).
    api.on("before_prompt_build", async (_event, ctx) => {
      if (!ctx?.sessionId) return;
      moment(ctx.sessionId, ctx.agentId, "busy");
      await opened(ctx.sessionId, true);
      const answer = await started().call("session-tools/hand-over", { sessionID: ctx.sessionId, moment: "prompt" });
      if (answer?.text) return { prependContext: answer.text };
    });

    // A write into another session's claim is blocked: the model reads why.
    api.on("before_tool_call", async (event, ctx) => {
      if (!WRITING.has(event?.toolName) || !ctx?.sessionId) return;
      const log = (level, message) => api.logger[level]?.(`session-tools: ${message}`);
      const refusal = await writeRefusal(config, WRITE_HOOK, "before_tool_call", event.toolName, ctx.sessionId, event.params, log);
      if (refusal) return { block: true, blockReason: refusal };
    });

    // In a gateway, a session whose turn ended is idle until its next prompt.
    if (IN_GATEWAY)
      api.on("agent_end", async (_event, ctx) => {
        if (!ctx?.sessionId) return;
        moment(ctx.sessionId, ctx.agentId, "idle");
        await opened(ctx.sessionId, false);
        watch(api.logger);
      });
  },
};
