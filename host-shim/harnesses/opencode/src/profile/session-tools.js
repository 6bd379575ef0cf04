// session-tools for OpenCode: the tools sessions_list, sessions_read, sessions_send and
// sessions_claim, answered by host-shim, the hand-over of messages other sessions send,
// and a check before each file write that keeps it out of other sessions' claims.
// Written by `host-shim setup opencode`; `host-shim setup opencode --remove` takes it out.
//
// One `host-shim mcp` child per OpenCode process speaks JSON-RPC on its stdio. Each
// tool call carries the calling session as OpenCode gives it to the tool
// (context.sessionID) and the model's call id, in `_meta`, where the model cannot
// write. The plugin tells the child which sessions this process runs and whether each
// is at work, and hands over what waits for them: at a person's prompt (added to the
// prompt), to an idle session (a new turn), to a busy one its `steer` messages (its
// next model request).
import { tool } from "@opencode-ai/plugin";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const HOST = __HOST__;
// The tools that write files, and the command that asks before each call whether the
// session may write those files now (another session's claim may cover them).
const WRITING = new Set(["edit", "write", "apply_patch"]);
const WRITE_HOOK = "opencode-write-hook";

/* __SESSION_TOOLS_PLUGIN__ */

/** A tool's arguments for OpenCode: the plugin's own JSON Schema, shown to the model
 * as it is, and no check of OpenCode's, so every bad argument gets the plugin's
 * readable refusal. */
function argsOf(schema) {
  const z = tool.schema;
  const required = new Set(schema.required ?? []);
  const args = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const any = z.any().meta(property);
    args[name] = required.has(name) ? any : any.optional();
  }
  return args;
}

export const SessionTools = async ({ client }) => {
  // stderr is not OpenCode's terminal: what host-shim says there goes to OpenCode's log.
  const said = [];
  const host = new Host(HOST, { name: "opencode", title: "OpenCode" }, (line) => said.push(line));
  const { tools } = await host.call("tools/list", {});

  const log = (level, message) =>
    client.app.log({ body: { service: "session-tools", level, message } }).catch(() => {});
  setInterval(() => {
    for (const line of said.splice(0)) log("info", line);
  }, 1000).unref();

  // The sessions this process runs: "busy" or "idle".
  const sessions = new Map();

  async function open(sessionID, busy) {
    const was = sessions.get(sessionID);
    const now = busy ? "busy" : "idle";
    sessions.set(sessionID, now);
    if (was !== now) {
      await host.request("session-tools/open", { sessionID, busy });
      nudge();
    }
  }

  /** Hands over what waits for an idle or busy session, as a message of its own. */
  async function handOver(sessionID) {
    const moment = sessions.get(sessionID) ?? "idle";
    const answer = await host.request("session-tools/hand-over", { sessionID, moment });
    if (!answer?.text) return;
    const given = await client.session.promptAsync({
      path: { id: sessionID },
      body: { parts: [{ type: "text", text: answer.text, synthetic: true }] },
    });
    if (given.error) log("error", `a message handed over to ${sessionID} did not reach it: ${JSON.stringify(given.error)}`);
  }

  // One wait at a time for every session here; a change of state starts it again.
  const nudge = host.watch(
    () => [...sessions].map(([sessionID, moment]) => ({ sessionID, moment })),
    handOver,
    (err) => log("error", `waiting for messages: ${err.message}`),
  );

  const defined = {};
  for (const spec of tools) {
    defined[spec.name] = tool({
      description: spec.description,
      args: argsOf(spec.inputSchema ?? {}),
      async execute(args, context) {
        await open(context.sessionID, true);
        // A send may await its reply for up to await_reply_seconds.
        const awaits = Number.isFinite(args?.await_reply_seconds) ? args.await_reply_seconds : 0;
        const result = await host.request(
          "tools/call",
          {
            name: spec.name,
            arguments: args,
            _meta: { "opencode/sessionID": context.sessionID, "opencode/callID": context.callID ?? "" },
          },
          { seconds: 120 + Math.min(Math.max(awaits, 0), 3600) },
        );
        const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
        // A refusal is the tool's error, as an MCP client shows isError.
        if (result.isError) throw new Error(text);
        return text;
      },
    });
  }

  return {
    tool: defined,
    // A write into another session's claim is the tool's error: the model reads why.
    "tool.execute.before": async ({ tool, sessionID }, output) => {
      if (!WRITING.has(tool)) return;
      const refusal = await writeRefusal(HOST, WRITE_HOOK, "tool.execute.before", tool, sessionID, output.args, log);
      if (refusal) throw new Error(refusal);
    },
    "chat.message": async ({ sessionID }, output) => {
      // A message this plugin handed over is not a person's prompt.
      if (output.parts.length > 0 && output.parts.every((part) => part.synthetic)) return;
      await open(sessionID, true);
      const answer = await host.request("session-tools/hand-over", { sessionID, moment: "prompt" });
      if (!answer?.text) return;
      // After the prompt's own parts: OpenCode orders a message's parts by id.
      const last = output.parts.map((part) => part.id).sort().at(-1) ?? "prt_";
      output.parts.push({
        id: `${last}0`,
        sessionID,
        messageID: output.message.id,
        type: "text",
        text: answer.text,
        synthetic: true,
      });
    },
    event: async ({ event }) => {
      if (event.type !== "session.status") return;
      const { sessionID, status } = event.properties;
      await open(sessionID, status.type !== "idle");
      if (status.type === "idle") await handOver(sessionID);
    },
  };
};
