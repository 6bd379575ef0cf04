/** The refusal's text when `sessionId` may not write what a call of `tool` with
 * `toolInput` would write (null when it may): runs `host-shim <hook>` with the server's
 * flags (`args` after `mcp`), given the call as a command hook's input on stdin. When
 * the check cannot be made, the write goes ahead and `log` says why. (Shared by the
 * session-tools plugins; setup writes it into each.) */
function writeRefusal({ command, args }, hook, event, tool, sessionId, toolInput, log) {
  const input = { session_id: sessionId, hook_event_name: event, tool_name: tool, tool_input: toolInput };
  return new Promise((resolve) => {
    const child = spawn(command, [hook, ...args.slice(1)], { stdio: ["pipe", "pipe", "pipe"] });
    const out = [];
    const err = [];
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => err.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const unchecked = (why) => {
      log("error", `the ${tool} call's write was not checked against other sessions' claims: ${why}`);
      resolve(null);
    };
    child.on("error", (e) => (clearTimeout(timer), unchecked(`cannot run ${command}: ${e.message}`)));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const said = Buffer.concat(err).toString().trim();
      if (code !== 0) return unchecked(said || `host-shim ${hook} exited (${signal ?? code})`);
      if (said) log("info", said);
      resolve(Buffer.concat(out).toString().trim() || null);
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}
