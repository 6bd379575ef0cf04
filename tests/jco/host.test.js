// The same plugin.wasm in two runtimes: every shared case (tests/cases/*.txt) runs
// through this jco host and through `host-shim call` (wasmtime). The two must give
// byte-identical text, the same refusal code (the one the text names) and identical
// deliveries, and both must match the case. A case's later calls (`--- then`) run on
// the same jco host and must match the case too (the Rust case runner checks them
// under wasmtime).

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callOn, corpusHost, loadPlugin, parseCases, parseCorpus, refusalNamedIn, repoRoot } from './host.js';

const casesDir = path.join(repoRoot, 'tests', 'cases');
const corporaDir = path.join(repoRoot, 'tests', 'corpora');
const hostShim = process.env.HOST_SHIM ?? path.join(repoRoot, 'target', 'debug', 'host-shim');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'jco-cases-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * One call through host-shim: its stdout (minus the final newline), the refusal code
 * its `--stats` line reports, and its deliveries.
 */
function viaHostShim(c) {
  const settingsFile = path.join(scratch, 'settings.json');
  const deliveriesFile = path.join(scratch, 'deliveries.json');
  writeFileSync(settingsFile, c.settings);
  const args = ['call', c.tool];
  if (c.args) args.push(c.args);
  args.push('--corpus', path.join(corporaDir, `${c.corpus}.json`), '--caller', c.caller);
  args.push('--settings', settingsFile, '--deliveries', deliveriesFile, '--stats');
  if (c.callId) args.push('--call-id', c.callId);
  // A scratch compiled-plugin cache: the first call compiles, the rest load.
  const env = { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache') };
  const run = spawnSync(hostShim, args, { encoding: 'utf8', env });
  assert.equal(run.status, 0, `host-shim failed: ${run.stderr}`);
  const stats = JSON.parse(run.stderr.trim().split('\n').pop());
  return {
    text: run.stdout.endsWith('\n') ? run.stdout.slice(0, -1) : run.stdout,
    refusal: stats.refusal ?? undefined,
    deliveries: JSON.parse(readFileSync(deliveriesFile, 'utf8')),
  };
}

const instantiate = await loadPlugin();
const corpora = new Map();
const corpus = (name) => {
  if (!corpora.has(name)) corpora.set(name, parseCorpus(readFileSync(path.join(corporaDir, `${name}.json`), 'utf8')));
  return corpora.get(name);
};

test('host-shim is built', () => {
  assert.ok(existsSync(hostShim), `${hostShim} is missing: run cargo build -p host-shim-cli first`);
});

const files = readdirSync(casesDir).filter((f) => f.endsWith('.txt')).sort();
for (const file of files) {
  const cases = parseCases(readFileSync(path.join(casesDir, file), 'utf8'), file);
  test(`${file}: jco and wasmtime agree on every case`, async (t) => {
    assert.ok(cases.length > 0);
    for (const c of cases) {
      await t.test(c.name, () => {
        const host = corpusHost(corpus(c.corpus));
        const js = callOn(instantiate, host, c);
        const wasmtime = viaHostShim(c);
        assert.equal(js.text, wasmtime.text, 'jco and host-shim answer differently');
        assert.equal(js.refusal, wasmtime.refusal, 'jco and host-shim give different refusal codes');
        assert.equal(js.refusal, refusalNamedIn(js.text), 'the refusal code is not the one the text names');
        assert.deepEqual(js.deliveries, wasmtime.deliveries, 'jco and host-shim deliver differently');
        assert.equal(js.text, c.output, 'the answer differs from the case');
        assert.deepEqual(js.deliveries, c.deliveries, 'the deliveries differ from the case');
        // Later calls run on the same host; the Rust runner checks host-shim's side.
        for (const [step, later] of c.then.entries()) {
          const next = callOn(instantiate, host, { ...c, caller: later.caller ?? c.caller, callId: later.callId ?? c.callId, tool: later.tool, args: later.args });
          assert.equal(next.text, later.output, `call ${step + 2}: the answer differs from the case`);
          assert.equal(next.refusal, refusalNamedIn(next.text), `call ${step + 2}: the refusal code is not the one the text names`);
          assert.deepEqual(next.deliveries, later.deliveries, `call ${step + 2}: the deliveries differ from the case`);
        }
      });
    }
  });
}

test('the catalog is the same four tools under jco', () => {
  const tools = instantiate(corpusHost(parseCorpus('{"sessions": []}')).imports);
  assert.deepEqual(tools.catalog('').map((t) => t.name), ['sessions_list', 'sessions_read', 'sessions_send', 'sessions_claim']);
  assert.deepEqual(tools.catalog('{"enabled": false}'), []);
  // The MCP annotations cross as the WIT records them (an absent hint is undefined).
  assert.deepEqual(tools.catalog('').map((t) => t.annotations), [
    { title: 'List sessions', readOnlyHint: true, destructiveHint: undefined, idempotentHint: undefined, openWorldHint: false },
    { title: 'Read a session', readOnlyHint: true, destructiveHint: undefined, idempotentHint: undefined, openWorldHint: false },
    { title: 'Send to a session', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    { title: 'Claim files', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  ]);
  assert.throws(() => tools.catalog('{"nope": 1}'), (err) => String(err.payload).startsWith('invalid settings: unknown key "nope"'));
});

test('a claim made under jco keeps another session\'s write out until released', () => {
  const host = corpusHost(corpus('harness'));
  const claimed = callOn(instantiate, host, { caller: 's-live', tool: 'sessions_claim', args: '{"paths": ["lib.rs"], "reason": "parser rewrite"}' });
  assert.match(claimed.text, /^claimed c-[0-9a-f]{12} \(exclusive, until .* UTC, "parser rewrite"\): \/w\/parser\/lib\.rs\n/);
  const check = () => instantiate(host.imports).checkWrite('s-me', '', ['/w/parser/lib.rs']);
  const refused = check();
  assert.equal(refused.tag, 'refused');
  assert.equal(refused.val.claims.length, 1);
  assert.match(refused.val.text, /^write refused \(claimed\): \/w\/parser\/lib\.rs is claimed by another session:\n- s-live /);
  const released = callOn(instantiate, host, { caller: 's-live', tool: 'sessions_claim', args: '{"release": true}' });
  assert.match(released.text, /^released c-/);
  assert.deepEqual(check(), { tag: 'allowed' });
});
