// session-tools for OpenClaw: the tools session-tools__sessions_list,
// session-tools__sessions_read and session-tools__sessions_send, answered by host-shim,
// and the hand-over of messages other sessions send.
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
// adds what waits for it to the prompt.
import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";

const PREFIX = "session-tools__";

/** The child and its JSON-RPC requests in flight. */
class Host {
  constructor({ command, args }, logger) {
    this.next = 1;
    this.pending = new Map();
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    // What host-shim says on stderr goes to OpenClaw's log.
    createInterface({ input: this.child.stderr }).on("line", (line) => logger.info?.(line));
    this.exited = null;
    this.child.on("exit", (code, signal) => {
      this.exited = `host-shim exited (${signal ?? code}); restart OpenClaw, and run host-shim doctor`;
      for (const { reject } of [...this.pending.values()]) reject(new Error(this.exited));
      this.pending.clear();
    });
    this.child.on("error", (err) => {
      this.exited = `cannot run ${command}: ${err.message}; run host-shim setup openclaw again`;
    });
    // The child ends with this process; it never keeps OpenClaw running.
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream.unref?.();
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
    });
    this.ready = this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "session-tools-openclaw", version: "1" },
    }).then(() => this.send({ method: "notifications/initialized" }));
  }

  send(message) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
  }

  /** A request's result within `seconds` (else an error naming what did not answer,
   * and the request is cancelled). No request waits forever. */
  request(method, params, { seconds = 60 } = {}) {
    if (this.exited) return Promise.reject(new Error(this.exited));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        this.send({ method: "notifications/cancelled", params: { requestId: id, reason: "no answer in time" } });
        reject(new Error(`host-shim did not answer ${method} within ${seconds} s; run host-shim doctor`));
      }, seconds * 1000);
      timer.unref?.();
      this.pending.set(id, {
        resolve: (result) => this.pending.delete(id) && (clearTimeout(timer), resolve(result)),
        reject: (err) => this.pending.delete(id) && (clearTimeout(timer), reject(err)),
      });
      this.send({ id, method, params });
    });
  }

  async call(method, params, options) {
    await this.ready;
    return this.request(method, params, options);
  }
}

/** The tools as the plugin's catalog gives them (the settings in the server's
 * arguments, if any, apply): read once, when OpenClaw loads the plugin. */
function catalog({ command, args }) {
  const at = args.indexOf("--settings");
  const settings = at >= 0 ? args.slice(at, at + 2) : [];
  const out = spawnSync(command, ["catalog", ...settings], { encoding: "utf8", timeout: 60_000 });
  if (out.error) throw new Error(`cannot run ${command}: ${out.error.message}; run host-shim setup openclaw again`);
  if (out.status !== 0) throw new Error(`host-shim catalog failed: ${out.stderr.trim()}; run host-shim doctor`);
  return JSON.parse(out.stdout);
}

let host = null;

export default {
  id: "session-tools",
  name: "Session tools",
  description: "sessions_list, sessions_read and sessions_send across the sessions of every harness here",
  register(api) {
    const config = api.pluginConfig ?? {};
    if (typeof config.command !== "string" || !Array.isArray(config.args)) {
      api.logger.error?.("session-tools: plugins.entries.session-tools.config has no command and args; run host-shim setup openclaw");
      return;
    }
    const started = () => (host ??= new Host(config, api.logger));
    const opened = async (sessionId) => {
      await started().call("session-tools/open", { sessionID: sessionId, busy: true });
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
      await opened(ctx.sessionId);
      const answer = await started().call("session-tools/hand-over", { sessionID: ctx.sessionId, moment: "prompt" });
      if (answer?.text) return { prependContext: answer.text };
    });
  },
};
