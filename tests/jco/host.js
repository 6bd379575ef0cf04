// A JavaScript host for plugin.wasm under jco: the harness side of `session-query`,
// `claims` and `inbox` over the same corpus JSON as host-shim, and one tool call per fresh
// instance. This is what a TypeScript harness would write; the tests run it against
// host-shim on the shared cases.

import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { transpile } from '@bytecodealliance/jco';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
export const pluginPath = path.join(repoRoot, 'target', 'plugin', 'plugin.wasm');

/**
 * Transpiles plugin.wasm with jco (sync instantiation, so the host passes its imports
 * as a plain object) and compiles its core modules once.
 * @returns {Promise<(imports: object) => object>} a function that instantiates the
 *   plugin with the given imports and returns its `tools` export.
 */
export async function loadPlugin(wasmPath = pluginPath) {
  const component = await readFile(wasmPath);
  const { files } = await transpile(component, {
    name: 'plugin',
    instantiation: 'sync',
    quiet: true,
    noTypescript: true,
  });
  const outDir = path.join(here, 'gen');
  await mkdir(outDir, { recursive: true });
  const modules = new Map();
  for (const [name, bytes] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(outDir, name)), { recursive: true });
    await writeFile(path.join(outDir, name), bytes);
    if (name.endsWith('.wasm')) modules.set(name, new WebAssembly.Module(bytes));
  }
  const generated = await import(pathToFileURL(path.join(outDir, 'plugin.js')).href);
  return (imports) => {
    const root = generated.instantiate((name) => modules.get(name), imports);
    return root.tools;
  };
}

/** JSON text with object keys sorted, as host-shim's serde_json writes a value. */
function sortedJson(value) {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A corpus tool call as the contract gives it (host-shim's `tool_action`): an object
 * `{name, input, status}` (or its JSON text), else a call named by the value.
 */
function toolAction(call) {
  if (typeof call === 'string') {
    try {
      call = JSON.parse(call);
    } catch {
      // a plain name
    }
  }
  const known = ['name', 'input', 'status'];
  const isCall = call && typeof call === 'object' && !Array.isArray(call)
    && typeof call.name === 'string' && Object.keys(call).every((k) => known.includes(k))
    && (call.status === undefined || call.status === null || ['ok', 'error', 'running'].includes(call.status));
  if (isCall) {
    const input = call.input;
    return {
      name: call.name,
      input: typeof input === 'string' ? input : input === undefined || input === null ? '' : sortedJson(input),
      status: call.status ?? 'ok',
    };
  }
  return { name: typeof call === 'string' ? call : sortedJson(call), input: '', status: 'ok' };
}

/** A frame's text without its `message-id:` and `in-reply-to:` header lines. */
function withoutIds(text) {
  const first = 'Cross-session message from another session of this harness.';
  if (!text.startsWith(first)) return text;
  let begins = text.indexOf('\n--- message begins ---\n');
  if (begins < 0 && text.endsWith('\n--- message begins ---')) begins = text.length - '--- message begins ---'.length - 1;
  if (begins < 0) return text;
  const head = text.slice(0, begins).split('\n')
    .filter((line) => !line.startsWith('message-id: ') && !line.startsWith('in-reply-to: '));
  return head.join('\n') + text.slice(begins);
}

/** The text parts of a corpus message joined by a line feed; undefined without one. */
function joinedText(parts) {
  const texts = parts.map((part) => part.text).filter((text) => typeof text === 'string');
  return texts.length ? texts.join('\n') : undefined;
}

/** Chars (Unicode scalar values) of a string. */
function charCount(text) {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** The first `chars` chars of `text` (all of it when shorter). */
function lead(text, chars) {
  let end = 0;
  let taken = 0;
  for (const ch of text) {
    if (taken === chars) break;
    end += ch.length;
    taken += 1;
  }
  return text.slice(0, end);
}

const utf8Bytes = (text) => Buffer.byteLength(text, 'utf8');

/**
 * Reads the host-shim corpus format (see README "Corpus format"), with the same
 * defaults. Only a message's text crosses to the plugin (its text parts joined), so
 * that is all a message keeps.
 */
export function parseCorpus(json) {
  const file = typeof json === 'string' ? JSON.parse(json) : json;
  const sessions = (file.sessions ?? []).map((s, index) => {
    const createdAtMs = Date.parse(s.created_at);
    if (typeof s.id !== 'string' || Number.isNaN(createdAtMs)) {
      throw new Error(`sessions[${index}]: needs an id and an RFC 3339 created_at`);
    }
    const messages = (s.messages ?? []).map((m) => {
      const text = joinedText(m.parts ?? []);
      const actions = (m.parts ?? []).filter((part) => 'tool_call' in part).map((part) => toolAction(part.tool_call));
      return {
        seq: BigInt(m.seq),
        role: m.role,
        source: m.source ?? m.role,
        replaced: m.replaced ?? false,
        injected: m.injected ?? false,
        text,
        textChars: text === undefined ? 0 : charCount(text),
        actions,
      };
    });
    const lastSeq = messages.reduce((max, m) => (m.seq > max ? m.seq : max), 0n);
    return {
      header: {
        id: s.id,
        createdAtMs: BigInt(createdAtMs),
        live: s.live ?? false,
        parentId: s.parent ?? undefined,
        origin: s.origin ?? 'user',
        cwd: s.cwd ?? undefined,
        preset: s.preset ?? undefined,
        inbound: s.inbound ?? 'accept',
        machine: s.machine ?? undefined,
      },
      title: s.title ?? undefined,
      messages,
      capturedThroughSeq: s.captured_through_seq != null ? BigInt(s.captured_through_seq) : lastSeq,
      reject: s.reject ?? undefined,
      refuseDelivery: s.refuse_delivery ?? undefined,
      deliveryState: s.delivery_state ?? 'handed-over',
      inbox: (s.inbox ?? []).map((i) => ({
        from: i.from,
        waiting: i.waiting ?? 0,
        handedOver: i.handed_over ?? 0,
      })),
    };
  });
  // The first of repeated ids answers lookups; listings show every session.
  const byId = new Map();
  for (const session of sessions) if (!byId.has(session.header.id)) byId.set(session.header.id, session);
  return { caller: file.caller, sessions, byId };
}

/**
 * The two imported interfaces (harness:sessions@0.5.0) over a corpus, recording what
 * the inbox accepted. The controller follows host-shim's in-memory semantics
 * (host-shim/src/harnesses/corpus.rs): an accepted delivery makes the target live and, in the
 * session's `delivery_state` (default `handed-over`), appends the body as its newest
 * user message (`waiting` leaves the surface as it was); a key it has answered before
 * gets that answer again and delivers nothing, and so do the same words from the same
 * sender to the same session under another key; `inboxStatus` answers the session's
 * scripted `inbox` counts for a sender that is a session of the corpus (zero otherwise). The host works on its own copy, so the corpus passed in
 * never changes. A session whose person refuses inbound refuses a delivery; one that
 * holds it keeps the message held. `sendHistory` counts what it accepted from a sender
 * (the key's, else the calling session's). Tool calls cross as `getActions` gives
 * them.
 */
export function corpusHost(shared) {
  const corpus = structuredClone(shared);
  const deliveries = [];
  const answered = new Map();
  // What was accepted, to find the same words from the same sender again (host-shim's
  // delivery path: a repeat within ten minutes, which a test never outlives).
  const accepted = [];
  // The calling session (callOn sets it), for a delivery whose key names none.
  const current = { caller: '' };
  const senderOf = (key) => {
    const colon = key.indexOf(':');
    if (colon < 0) return '';
    const length = Number(key.slice(0, colon));
    const bytes = new TextEncoder().encode(key.slice(colon + 1));
    return Number.isInteger(length) && length <= bytes.length
      ? new TextDecoder().decode(bytes.slice(0, length))
      : '';
  };
  const header = (id) => corpus.byId.get(id)?.header;
  const controller = (target, body, mode, mayWake, key, ids) => {
    const session = corpus.byId.get(target);
    if (!session) return { err: { tag: 'not-found' } };
    // A scripted controller answer: the session vanished, will not be woken, or its
    // inbox cannot tell whether it stored the message.
    if (session.refuseDelivery === 'undecided') {
      return { err: { tag: 'undecided', val: 'the inbox did not acknowledge the write (scripted)' } };
    }
    if (session.refuseDelivery !== undefined) return { err: { tag: session.refuseDelivery } };
    if (session.reject !== undefined) return { err: { tag: 'rejected', val: session.reject } };
    const highest = session.messages.reduce((max, m) => (m.seq > max ? m.seq : max), 0n);
    const seq = (highest > session.capturedThroughSeq ? highest : session.capturedThroughSeq) + 1n;
    // A seq is a u64: a session whose last seq is already the largest is full.
    if (seq > 0xffffffffffffffffn) {
      return { err: { tag: 'rejected', val: 'the session is full: its last message already has the largest seq' } };
    }
    const sender = senderOf(key) || current.caller;
    const words = withoutIds(body);
    const first = sender && accepted.find((a) => a.target === target && a.sender === sender && withoutIds(a.body) === words);
    if (first) return { ok: { ...first.ok, repeat: true } };
    if (session.header.inbound === 'refuse') return { err: { tag: 'refused-by-target' } };
    const held = session.header.inbound === 'hold';
    const woke = !held && !session.header.live;
    if (woke && !mayWake) return { err: { tag: 'would-need-wake' } };
    if (!held) session.header.live = true;
    const state = held ? 'held' : session.deliveryState;
    if (state === 'handed-over') {
      session.messages.push({ seq, role: 'user', source: 'user', replaced: false, injected: false, text: body, textChars: charCount(body), actions: [] });
      session.capturedThroughSeq = seq;
    }
    // Recorded as host-shim's --deliveries writes them.
    const record = { target, mode, body, woke, state };
    deliveries.push(key ? { ...record, key } : record);
    const ok = { woke, repeat: false, state, messageId: ids.messageId };
    accepted.push({ target, sender, body, ok, key, at: Date.now(), inReplyTo: ids.inReplyTo, taken: state === 'handed-over' });
    return { ok };
  };
  // Claims as host-shim's in-memory inbox keeps them: the whole set, swapped only at
  // the revision read.
  let claimSet = { claims: [], revision: 0n };
  const imports = {
    'harness:sessions/claims': {
      read() {
        return { claims: claimSet.claims, revision: claimSet.revision, nowMs: BigInt(Date.now()) };
      },
      write(revision, claims, _changes) {
        if (revision !== claimSet.revision) throw { payload: { tag: 'stale' } };
        claimSet = { claims, revision: revision + 1n };
        return claimSet.revision;
      },
    },
    'harness:sessions/session-query': {
      listSessions() {
        const entries = corpus.sessions.map(({ header: h }) => ({
          idLen: utf8Bytes(h.id),
          createdAtMs: h.createdAtMs,
          live: h.live,
          subagent: h.parentId !== undefined || h.origin === 'subagent',
        }));
        return { ids: corpus.sessions.map((s) => s.header.id).join(''), entries };
      },
      getSession: header,
      getSessions: (ids) => ids.map(header),
      titleSnapshots: (ids) => ids.map((id) => corpus.byId.get(id)?.title),
      getSurface(id, leadChars) {
        const session = corpus.byId.get(id);
        if (!session) return undefined;
        const sourceLeads = [];
        const textLeads = [];
        const messages = session.messages.map((m) => {
          const source = lead(m.source, leadChars);
          const text = lead(m.text ?? '', leadChars);
          sourceLeads.push(source);
          textLeads.push(text);
          return {
            seq: m.seq,
            role: m.role,
            replaced: m.replaced,
            injected: m.injected,
            sourceLeadLen: utf8Bytes(source),
            textLeadLen: utf8Bytes(text),
            textChars: m.textChars,
          };
        });
        return {
          messages,
          sourceLeads: sourceLeads.join(''),
          textLeads: textLeads.join(''),
          capturedThroughSeq: session.capturedThroughSeq,
        };
      },
      getMessages(id, seqs) {
        const session = corpus.byId.get(id);
        return Array.from(seqs, (seq) => {
          const m = session?.messages.find((message) => message.seq === seq);
          return m && { source: m.source, text: m.text ?? '', injected: m.injected };
        });
      },
      inboxStatus(target, sender) {
        // Both zero when either session is unknown (the WIT).
        const known = corpus.byId.has(sender);
        const count = known ? corpus.byId.get(target)?.inbox.find((i) => i.from === sender) : undefined;
        return { waiting: count?.waiting ?? 0, handedOver: count?.handedOver ?? 0 };
      },
      actionSeqs(id) {
        const session = corpus.byId.get(id);
        return (session?.messages ?? []).filter((m) => m.actions.length > 0).map((m) => m.seq);
      },
      getActions(id, seqs) {
        const session = corpus.byId.get(id);
        return Array.from(seqs, (seq) => session?.messages.find((message) => message.seq === seq)?.actions ?? []);
      },
      sendHistory(sender, target, windowMinutes, limit, key) {
        const now = Date.now();
        const since = now - windowMinutes * 60000;
        const mine = accepted.filter((a) => a.sender === sender && a.at >= since).sort((a, b) => b.at - a.at);
        const toTarget = mine.filter((a) => a.target === target);
        const times = (list) => list.slice(0, limit).map((a) => BigInt(a.at));
        return {
          nowMs: BigInt(now),
          toTarget: toTarget.length,
          toAny: mine.length,
          toTargetTimes: times(toTarget),
          toAnyTimes: times(mine),
          keyAccepted: key !== '' && accepted.some((a) => a.key === key),
        };
      },
    },
    'harness:sessions/inbox': {
      deliver(target, body, mode, mayWake, key, ids) {
        let answer = answered.get(key);
        if (answer) {
          answer = answer.ok ? { ok: { ...answer.ok, repeat: true } } : answer;
        } else {
          answer = controller(target, body, mode, mayWake, key, ids);
          if (key) answered.set(key, answer);
        }
        // A thrown { payload } is the `err` side of the result.
        if (answer.err) throw { payload: answer.err };
        return answer.ok;
      },
    },
  };
  /**
   * Takes the reply `wait` asks for from the caller's inbox, if it came (host-shim's
   * `await_reply` looking once): from the target, answering the sent message, waiting
   * for the caller, whose person does not hold inbound.
   */
  const takeReply = (caller, wait) => {
    if (corpus.byId.get(caller)?.header.inbound === 'hold') return undefined;
    const reply = accepted.find((a) => !a.taken && a.target === caller && a.sender === wait.target && a.inReplyTo === wait.messageId);
    if (!reply) return undefined;
    reply.taken = true;
    return reply.body;
  };
  return { imports, deliveries, current, takeReply };
}

/**
 * The refusal code SPEC's text implies (the same reading as the Rust oracle,
 * `invariants::refusal_named_in`).
 */
export function refusalNamedIn(text) {
  if (text.startsWith('invalid arguments: ')) return 'invalid-arguments';
  if (text.startsWith('unknown tool ')) return 'unknown-tool';
  const firstLine = text.split('\n')[0];
  const match = /^(sessions_list|sessions_read|sessions_send) refused \(([^)]*)\): /.exec(firstLine);
  return match ? match[2] : undefined;
}

/**
 * Runs one tool call in a fresh instance over `host` (from `corpusHost`), which keeps
 * what the controller did for the next call.
 * @returns {{ text: string, refusal: string | undefined, deliveries: object[] }} the
 *   answer and the deliveries of this call only
 */
export function callOn(instantiate, host, { caller, callId = '', settings = '', tool, args = '' }) {
  const before = host.deliveries.length;
  host.current.caller = caller;
  const tools = instantiate(host.imports);
  // `call` returns the ok answer; an err (invalid settings) is thrown as ComponentError.
  let { text, refusal, awaitReply } = tools.call(caller, callId, settings, tool, args);
  // A send that awaits its reply: look once (as the Rust case runner does), then end
  // the call in a fresh instance with the reply, or with none.
  if (awaitReply) {
    const reply = host.takeReply(caller, awaitReply);
    ({ text, refusal } = instantiate(host.imports).replyAwaited(caller, settings, text, awaitReply, reply));
  }
  return { text, refusal, deliveries: host.deliveries.slice(before) };
}

/** Parses a case file (format: tests/support/lib.rs, `parse_cases`). */
export function parseCases(text, file) {
  const cases = [];
  const lines = text.split('\n');
  let current = null;
  let section = 'head';
  let body = [];
  const finish = () => {
    if (!current) return;
    while (body.length && body[body.length - 1] === '') body.pop();
    // Sections after a `--- then` belong to that later call.
    const target = current.then.length ? current.then[current.then.length - 1] : current;
    if (section === 'output') target.output = body.join('\n');
    if (section === 'deliveries') target.deliveries = JSON.parse(body.join('\n'));
    body = [];
  };
  lines.forEach((line, index) => {
    if (line.startsWith('=== ')) {
      finish();
      current = { name: `${file}:${index + 1} ${line.slice(4)}`, settings: '', callId: '', args: '', output: '', deliveries: [], then: [] };
      cases.push(current);
      section = 'head';
      return;
    }
    if (!current) return;
    if (line.startsWith('--- then ')) {
      finish();
      let call = line.slice('--- then '.length);
      // `--- then as SESSION[ with call-id ID]: TOOL ARGS`: another caller.
      let caller;
      if (call.startsWith('as ')) {
        const rest = call.slice('as '.length);
        const colon = rest.indexOf(': ');
        const who = rest.slice(0, colon);
        const withId = who.indexOf(' with call-id ');
        caller = withId < 0 ? who : who.slice(0, withId);
        call = (withId < 0 ? '' : `${who.slice(withId + 1)}: `) + rest.slice(colon + 2);
      }
      // `--- then with call-id ID: TOOL ARGS`: the later call's own call id.
      let callId;
      if (call.startsWith('with call-id ')) {
        const rest = call.slice('with call-id '.length);
        const colon = rest.indexOf(': ');
        callId = rest.slice(0, colon);
        call = rest.slice(colon + 2);
      }
      const space = call.indexOf(' ');
      current.then.push({
        tool: space < 0 ? call : call.slice(0, space),
        args: space < 0 ? '' : call.slice(space + 1),
        callId,
        caller,
        output: '',
        deliveries: [],
      });
      section = 'then';
      return;
    }
    if (line === '--- output' || line === '--- deliveries') {
      finish();
      section = line.slice(4);
      return;
    }
    if (section !== 'head') {
      body.push(line);
      return;
    }
    if (line === '' || line.startsWith('#')) return;
    const at = line.indexOf(': ');
    const key = line.slice(0, at);
    const value = line.slice(at + 2);
    if (key === 'call') {
      const space = value.indexOf(' ');
      current.tool = space < 0 ? value : value.slice(0, space);
      current.args = space < 0 ? '' : value.slice(space + 1);
    } else if (key === 'corpus' || key === 'caller' || key === 'settings') {
      current[key] = value;
    } else if (key === 'call-id') {
      current.callId = value;
    } else if (key === 'since') {
      current.since = value;
    } else {
      throw new Error(`${current.name}: unknown key ${key}`);
    }
  });
  finish();
  return cases;
}
