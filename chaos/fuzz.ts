import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { InstanceClient } from '../src/client/client.js';
import { StatusCode } from '../src/client/status-code.js';
import { parseTarget } from '../src/client/target.js';
import { readConfigFile } from '../src/config/config-file.js';
import { parseConfig, type ConfigInput } from '../src/config/config.js';
import { decodeFrame } from '../src/events/frame.js';
import { EventArchive } from '../src/events/event-archive.js';
import { frameId, normalizeFrame } from '../src/events/normalize.js';
import { FilterSyntaxError } from '../src/filter/filter-syntax-error.js';
import { parseFilter } from '../src/filter/parser.js';
import { loadRulesFolder } from '../src/rules/rules-folder.js';
import { startSimulator } from '../src/simulator/simulator.js';
import { startEventProxy } from '../test/ingestion/support/event-proxy.js';
import { adversarialMessages, refusalProblems, rejectedEntries, type AdversarialMessage } from '../test/support/frame-fuzz.js';
import { keySpace, newPrefix, optIn, reflexRun, RestartableRedis, type ChaosOptions, type ScenarioResult } from './support.js';
import { until } from '../test/support/wait.js';

/**
 * fast-check against every edge that takes outside input: event frames, HTTP envelopes, filter
 * strings, config values and files, rule files. Nothing may throw where it should report, and
 * every rejection must say why.
 */
export async function fuzz(opts: ChaosOptions): Promise<ScenarioResult> {
  const n = opts.short ? 1 : 10;
  const found: string[] = [];
  let ok = true;
  const check = async (what: string, runs: number, body: () => Promise<string> | string) => {
    try {
      found.push(`${what}: ${await body()}`);
    } catch (err) {
      ok = false;
      found.push(`${what}: FAILED ${(err as Error).message.split('\n').slice(0, 6).join(' | ')}`);
    }
    opts.log(`  fuzz ${what} done (${runs} runs)`);
  };

  await check('frames', 2000 * n, () => {
    let rejected = 0;
    fc.assert(
      fc.property(frameArb, (raw) => {
        const d = decodeFrame(raw);
        if (!d.ok) {
          rejected++;
          if (!d.reason.trim()) throw new Error(`rejection without a reason: ${raw.slice(0, 100)}`);
          return;
        }
        normalizeFrame(d.frame, 'unix:///fuzz');
      }),
      { numRuns: 2000 * n },
    );
    return `${2000 * n} frames, ${rejected} rejected, each with a reason; no throw`;
  });

  await check('envelopes', 150 * n, () => fuzzEnvelopes(150 * n));

  await check('filters', 2000 * n, () => {
    let rejected = 0;
    fc.assert(
      fc.property(filterArb, (s) => {
        try {
          parseFilter(s);
        } catch (err) {
          if (!(err instanceof FilterSyntaxError) || err.position < 0 || err.position > s.length || !err.message)
            throw new Error(`unexplained: ${String(err)} for ${JSON.stringify(s)}`);
          rejected++;
        }
      }),
      { numRuns: 2000 * n },
    );
    return `${2000 * n} strings, ${rejected} rejected with a FilterSyntaxError and a position`;
  });

  await check('config', 1000 * n, () => {
    let rejected = 0;
    const dir = mkdtempSync(join(tmpdir(), 'reflex-fuzz-config-'));
    try {
      fc.assert(
        fc.property(configArb, fc.string(), (input, text) => {
          for (const attempt of [
            () => parseConfig(input as ConfigInput),
            () => (writeFileSync(join(dir, 'c.yaml'), text), parseConfig(readConfigFile(join(dir, 'c.yaml')))),
          ]) {
            try {
              attempt();
            } catch (err) {
              const e = err as { code?: string; message?: string };
              if (e.code !== 'CONFIG_INVALID' || !e.message?.trim()) throw new Error(`unexplained: ${String(err)} for ${JSON.stringify(input)}`);
              rejected++;
            }
          }
        }),
        { numRuns: 1000 * n },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return `${2000 * n} configs (objects and file texts), ${rejected} rejected with CONFIG_INVALID and a message`;
  });

  await check('rule files', 12 * n, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-fuzz-rules-'));
    try {
      const bodies = fc.sample(ruleFileArb, 12 * n);
      bodies.forEach((b, i) => writeFileSync(join(dir, `r${i}.ts`), b));
      const { rules, errors } = await loadRulesFolder(dir);
      const explained = errors.filter((e) => e.message.trim()).length;
      if (rules.length + errors.length < bodies.length)
        throw new Error(`${bodies.length - rules.length - errors.length} file(s) neither loaded nor reported`);
      if (explained !== errors.length) throw new Error('a rule file error without a message');
      return `${bodies.length} files: ${rules.length} loaded, ${errors.length} skipped with a reason`;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  await check('frames on the wire', 40 * n, () => fuzzWire(opts, n === 1 ? 1 : 20, 40));

  return {
    did: 'fast-check on event frames, HTTP envelopes, filter strings, config values and files, rule files; adversarial frames through a proxy to a running reflex run',
    found,
    ok,
  };
}

/**
 * Adversarial WebSocket messages (test/support/frame-fuzz.ts: depth, width, size up to 3 MB,
 * encodings, newlines, empty, duplicates, forged fields and notes) sent through a proxy in front
 * of the simulator to a running `reflex run`, `rounds` rounds of `perRound`, a valid frame among
 * each round's: the process must stay up, each refused message be one rejected entry with its
 * reason, true size and count, the valid frames be archived, and a crash after them be healed.
 */
async function fuzzWire(opts: ChaosOptions, rounds: number, perRound: number): Promise<string> {
  const redis = await RestartableRedis.start();
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
  sim.controls.addInstance({ name: 'web-1', config: optIn });
  const proxy = await startEventProxy(sim.socketPath!);
  const prefix = newPrefix('fuzz-wire');
  const keys = keySpace(prefix);
  const proc = reflexRun({ ...sim, socketPath: proxy.socketPath }, redis.url, prefix, 'all');
  let exited: number | null | undefined;
  proc.child.once('exit', (code) => (exited = code));
  const conn = new Redis(redis.url);
  const sent: AdversarialMessage[] = [];
  try {
    await proc.waitUntilWatching();
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1e9);
    opts.log(`  fuzz frames on the wire: seed ${seed} (FUZZ_SEED=${seed} replays it)`);
    const archive = new EventArchive({ redis: conn, key: keys.archive });
    for (let round = 0; round < rounds; round++) {
      const messages = fc.sample(adversarialMessages(perRound), { numRuns: 1, seed: seed + round })[0]!;
      const marker = {
        type: 'lifecycle',
        timestamp: new Date().toISOString(),
        location: 'none',
        project: 'default',
        metadata: { action: 'instance-updated', source: '/1.0/instances/web-1', name: 'web-1', project: 'default', context: { round, seed } },
      };
      messages.splice(messages.length >> 1, 0, { what: 'valid', data: Buffer.from(JSON.stringify(marker)), binary: false });
      for (const m of messages) {
        sent.push(m);
        proxy.injectBytes(m.data, m.binary);
      }
      const id = frameId(`unix://${proxy.socketPath}`, decodeFrameOk(JSON.stringify(marker)));
      await until(
        `round ${round}: the valid frame archived`,
        async () => {
          if (exited !== undefined) throw new Error(`reflex run exited (${exited})`);
          return (await archive.read()).some((a) => a.event.id === id);
        },
        60_000,
        1_000,
      ).catch((err: Error) => {
        const errors = proc.logs.filter((l) => Number(l.level) >= 40 && !String(l.msg).startsWith('malformed event rejected'));
        throw new Error(
          `seed ${seed} round ${round}: ${err.message}; event sockets open: ${proxy.connections}; last warnings: ${JSON.stringify(errors.slice(-4))}`,
        );
      });
      let problems: string[] = [];
      await until(
        `round ${round}: every refusal kept`,
        async () => (problems = refusalProblems(sent, await rejectedEntries(conn, keys.rejected))).length === 0,
        60_000,
        1_000,
      ).catch(() => {
        throw new Error(`seed ${seed} round ${round}: ${problems.slice(0, 5).join('; ')}`);
      });
      if (exited !== undefined) throw new Error(`reflex run exited (${exited}) in round ${round}, seed ${seed}`);
    }
    const at = Date.now();
    sim.controls.crash('web-1');
    await until('web-1 stopped', () => sim.controls.statusCode('web-1') !== StatusCode.Running, 5_000, 5);
    await until('the crash after the frames healed', () => sim.controls.statusCode('web-1') === StatusCode.Running, 20_000, 10);
    const healMs = Date.now() - at;
    if (exited !== undefined) throw new Error(`reflex run exited (${exited}), seed ${seed}`);
    const refused = sent.filter((m) => m.refused);
    const entries = await rejectedEntries(conn, keys.rejected);
    const mb = (sent.reduce((b, m) => b + m.data.length, 0) / 1024 / 1024).toFixed(1);
    return `${sent.length} messages (${mb} MB; ${refused.length} refused, ${entries.length} rejected entries counting ${entries.reduce((r, e) => r + e.repeats, 0)}), reflex run alive, a crash after them healed in ${healMs} ms (seed ${seed})`;
  } finally {
    conn.disconnect();
    await proc.stop();
    await proxy.close();
    await sim.stop();
    await redis.stop();
  }
}

function decodeFrameOk(raw: string) {
  const d = decodeFrame(raw);
  if (!d.ok) throw new Error(d.reason);
  return d.frame;
}

const validFrame = {
  type: 'lifecycle',
  timestamp: '2024-01-01T00:00:00.000000000Z',
  metadata: { action: 'instance-shutdown', source: '/1.0/instances/c1', requestor: null },
  location: 'none',
  project: 'default',
};

/** Raw frames: garbage, arbitrary JSON, and valid frames with one field replaced by anything. */
const frameArb = fc.oneof(
  fc.string(),
  fc.json(),
  fc
    .record({ field: fc.constantFrom('type', 'timestamp', 'metadata', 'location', 'project'), value: fc.jsonValue() })
    .map(({ field, value }) => JSON.stringify({ ...validFrame, [field]: value })),
  fc
    .record({ field: fc.constantFrom('action', 'source', 'requestor', 'context', 'name', 'project'), value: fc.jsonValue() })
    .map(({ field, value }) => JSON.stringify({ ...validFrame, metadata: { ...validFrame.metadata, [field]: value } })),
  fc.record({ status: fc.jsonValue(), code: fc.oneof(fc.integer(), fc.jsonValue()) }).map(({ status, code }) =>
    JSON.stringify({
      type: 'operation',
      timestamp: validFrame.timestamp,
      metadata: {
        id: 'x',
        class: 'task',
        status,
        status_code: code,
        resources: null,
        created_at: validFrame.timestamp,
        updated_at: validFrame.timestamp,
      },
    }),
  ),
);

const filterArb = fc.oneof(
  fc.string(),
  fc
    .array(fc.constantFrom('name', 'status', 'eq', 'ne', 'and', 'or', 'not', '(', ')', '"', "'", 'web', 'config.user.x', ' ', '^', '$', '.*', '\\'), {
      maxLength: 12,
    })
    .map((p) => p.join(' ')),
);

const configArb = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'target',
      'redisUrl',
      'rulesDir',
      'role',
      'prefix',
      'resyncIntervalMs',
      'leaseTtlMs',
      'resyncGraceMs',
      'actionAttempts',
      'actionConcurrency',
      'logLevel',
      'serverFingerprint',
    ),
    fc.string(),
  ),
  fc.jsonValue(),
  { maxKeys: 5 },
);

const ruleFileArb = fc.oneof(
  fc.string().map((s) => s),
  fc.constantFrom(
    'export default 42;',
    "throw new Error('boom at import');",
    "import { defineRule } from 'reflex-lxd'; export default defineRule({ name: '', on: [], actions: [] });",
    "import { defineRule } from 'reflex-lxd'; export default defineRule({ name: 'x', on: [{ kind: 'nope' }], actions: [{ action: 'start' }] });",
    "import { defineRule } from 'reflex-lxd'; export default defineRule({ name: 'y', on: [{ kind: 'instance.status' }], actions: [{ action: 'no-such-action' }] });",
    'export default {',
    "import missing from './does-not-exist.js'; export default missing;",
  ),
  fc.jsonValue().map((v) => `import { defineRule } from 'reflex-lxd'; export default defineRule(${JSON.stringify(v)} as never);`),
);

/** A server answering each GET with a fuzzed status and body; the client must resolve or throw an explained ApiError. */
async function fuzzEnvelopes(runs: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'reflex-fuzz-env-'));
  const socketPath = join(dir, 'unix.socket');
  let next = { status: 200, body: '' };
  const server = createServer((_req, res) => {
    res.writeHead(next.status, { 'content-type': 'application/json' });
    res.end(next.body);
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
  const client = new InstanceClient(parseTarget(`unix://${socketPath}`));
  const envelope = {
    type: 'sync',
    status: 'Success',
    status_code: 200,
    operation: '',
    error_code: 0,
    error: '',
    metadata: { name: 'c1', status: 'Running', status_code: 103 },
  };
  const bodyArb = fc.oneof(
    fc.string(),
    fc.json(),
    fc
      .record({ field: fc.constantFrom('type', 'status', 'status_code', 'error_code', 'error', 'metadata', 'operation'), value: fc.jsonValue() })
      .map(({ field, value }) => JSON.stringify({ ...envelope, [field]: value })),
  );
  let rejected = 0;
  const uncoded = new Map<string, number>();
  try {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(200, 202, 400, 403, 404, 500, 502), bodyArb, async (status, body) => {
        next = { status, body };
        try {
          await client.getInstance('c1');
        } catch (err) {
          const e = err as { name?: string; code?: string; message?: string };
          if (!e.message?.trim()) throw new Error(`unexplained: ${String(err)} for HTTP ${status} ${body.slice(0, 100)}`);
          // Every rejection carries a stable code (API_BAD_RESPONSE when the metadata does not fit
          // the resource schema); one without is counted and fails the scenario below.
          if (!e.code) uncoded.set(e.name ?? 'Error', (uncoded.get(e.name ?? 'Error') ?? 0) + 1);
          rejected++;
        }
      }),
      { numRuns: runs },
    );
  } finally {
    await client.close();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
  const bare = [...uncoded].map(([k, v]) => `${v} ${k}`).join(', ');
  if (bare) throw new Error(`envelopes: ${rejected} rejected, but without a stable error code: ${bare}`);
  return `${runs} responses, ${rejected} rejected with a message, each with an error code`;
}
