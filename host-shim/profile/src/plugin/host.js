/** The `host-shim mcp` child of a session-tools plugin, and its JSON-RPC requests in
 * flight. `{command, args}`: what it runs. `name` and `title`: the harness, for the
 * fixes its errors name. `detached`: the child and its pipes never keep the harness's
 * process running. `said(line)`: what the child says on stderr. `ready` settles once
 * MCP's initialize is answered; `call` waits for it. (Shared by the session-tools
 * plugins; setup writes it into each.) */
class Host {
  constructor({ command, args }, { name, title, detached = false }, said) {
    this.next = 1;
    this.pending = new Map();
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stderr }).on("line", said);
    this.exited = null;
    this.child.on("exit", (code, signal) => {
      this.exited = `host-shim exited (${signal ?? code}); restart ${title}, and run host-shim doctor`;
      for (const { reject } of [...this.pending.values()]) reject(new Error(this.exited));
      this.pending.clear();
    });
    this.child.on("error", (err) => {
      this.exited = `cannot run ${command}: ${err.message}; run host-shim setup ${name} again`;
    });
    if (detached) {
      this.child.unref();
      for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream.unref?.();
    }
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
      clientInfo: { name: `session-tools-${name}`, version: "1" },
    }).then(() => this.send({ method: "notifications/initialized" }));
  }

  send(message) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
  }

  /** A request's result within `seconds` (else an error naming what did not answer,
   * and the request is cancelled); `cancel` (if given) gets a function that ends it
   * early. No request waits forever, whatever the host made of it. */
  request(method, params, { cancel, seconds = 60 } = {}) {
    if (this.exited) return Promise.reject(new Error(this.exited));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const end = () => this.pending.delete(id) && (clearTimeout(timer), true);
      const timer = setTimeout(() => {
        if (!end()) return;
        this.send({ method: "notifications/cancelled", params: { requestId: id, reason: "no answer in time" } });
        reject(new Error(`host-shim did not answer ${method} within ${seconds} s; run host-shim doctor`));
      }, seconds * 1000);
      timer.unref?.();
      this.pending.set(id, {
        resolve: (result) => end() && resolve(result),
        reject: (err) => end() && reject(err),
      });
      if (cancel)
        cancel(() => {
          if (!end()) return;
          this.send({ method: "notifications/cancelled", params: { requestId: id } });
          resolve(null);
        });
      this.send({ id, method, params });
    });
  }

  /** A request once the child is initialized. */
  async call(method, params, options) {
    await this.ready;
    return this.request(method, params, options);
  }

  /** Waits for messages, one wait at a time until the child exits, for the sessions
   * `asked()` names (`[{sessionID, moment}]`; none: until nudged), giving each session
   * a message is ready for to `ready(sessionID)`; a wait that failed is told to
   * `failed(err)` and tried again a second later. Returns the nudge: call it when what
   * `asked()` names changed, and the wait starts again with it. */
  watch(asked, ready, failed) {
    let stopWaiting = null;
    (async () => {
      for (;;) {
        if (this.exited) return;
        const sessions = asked();
        if (sessions.length === 0) {
          await new Promise((resolve) => (stopWaiting = resolve));
          continue;
        }
        try {
          const answer = await this.call(
            "session-tools/wait",
            { sessions, seconds: 30 },
            { cancel: (stop) => (stopWaiting = stop), seconds: 60 },
          );
          for (const sessionID of answer?.ready ?? []) await ready(sessionID);
        } catch (err) {
          failed(err);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    })();
    return () => stopWaiting?.();
  }
}
