import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drained, startTestSim, type EventTap, type TestSim } from './sim-client.js';
import { until } from '../support/wait.js';

/**
 * Differential test against the real daemon: for each action captured from LXD 5.0.2
 * (test/fixtures/lxd-5.0.2-events.jsonl + .marks.txt), the simulator must produce the same lifecycle
 * actions (with source and requestor presence) and the same operation status sequences.
 */

const fixtureDir = new URL('../fixtures/', import.meta.url);
const frames = readFileSync(fileURLToPath(new URL('lxd-5.0.2-events.jsonl', fixtureDir)), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));
const markList = readFileSync(fileURLToPath(new URL('lxd-5.0.2-events.marks.txt', fixtureDir)), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => {
    const [time, name] = l.trim().split(/\s+/);
    return [name!, `2026-11-22T${time}`] as const;
  });
const marks = new Map(markList);
/** The mark after `mark`, which bounds the window of its own operations. */
const nextMark = (mark: string): string | undefined => markList[markList.findIndex(([n]) => n === mark) + 1]?.[1];

/** Nanosecond-comparable key of a timestamp (same day; lexical order of zero-padded fractions). */
const tsKey = (ts: string): string => {
  const [sec, frac = ''] = ts.replace(/(Z|[+-]\d\d:\d\d)$/, '').split('.');
  return `${sec}.${frac.padEnd(9, '0')}`;
};
const plusMs = (ts: string, ms: number): string => {
  const [sec, frac = ''] = tsKey(ts).split('.');
  const ns = BigInt(Date.parse(`${sec}Z`)) * 1_000_000n + BigInt(frac) + BigInt(Math.round(ms * 1e6));
  const base = new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19);
  return `${base}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
};

const rank = (code: number): number => ({ 105: 0, 103: 1, 104: 2 })[code] ?? 3;

/** Per operation: description and its distinct status codes in lifecycle order (progress repeats and reordering removed). */
function opSequences(fs: any[]): string[] {
  const byOp = new Map<string, { desc: string; codes: Set<number> }>();
  for (const f of fs.filter((x) => x.type === 'operation')) {
    const e = byOp.get(f.metadata.id) ?? { desc: f.metadata.description, codes: new Set<number>() };
    e.codes.add(f.metadata.status_code);
    byOp.set(f.metadata.id, e);
  }
  return [...byOp.values()].map((e) => `${e.desc}: ${[...e.codes].sort((a, b) => rank(a) - rank(b)).join('→')}`);
}

/** Lifecycle actions as "action source requestor?" in arrival order. */
function lifecycleOf(fs: any[], instance: string): string[] {
  return fs
    .filter((f) => f.type === 'lifecycle' && f.metadata.source.startsWith(`/1.0/instances/${instance}`))
    .map((f) => `${f.metadata.action} ${f.metadata.source} ${f.metadata.requestor ? 'requestor' : 'no-requestor'}`);
}

/** The frames the daemon produced for the action at `mark` on `instance`. */
function captured(mark: string, instance: string, quietMs = 2000): { lifecycle: string[]; ops: string[] } {
  const start = marks.get(mark);
  if (!start) throw new Error(`no mark ${mark}`);
  const from = tsKey(start);
  const touches = (f: any) => JSON.stringify(f.metadata.resources ?? {}).includes(`/${instance}`);
  const next = nextMark(mark);
  const opsUntil = [plusMs(start, 150), ...(next ? [tsKey(next)] : [])].sort()[0]!;
  const ownOps = new Set(
    frames
      .filter(
        (f) => f.type === 'operation' && f.metadata.status_code === 105 && tsKey(f.timestamp) >= from && tsKey(f.timestamp) < opsUntil && touches(f),
      )
      .map((f) => f.metadata.id),
  );
  const opFrames = frames.filter((f) => f.type === 'operation' && ownOps.has(f.metadata.id));
  const end =
    opFrames.length > 0
      ? plusMs(
          opFrames
            .map((f) => f.timestamp)
            .sort((a, b) => (tsKey(a) < tsKey(b) ? -1 : 1))
            .at(-1)!,
          20,
        )
      : plusMs(start, quietMs);
  const until = next && tsKey(next) < end ? tsKey(next) : end;
  const window = frames.filter((f) => tsKey(f.timestamp) >= from && tsKey(f.timestamp) < until);
  return { lifecycle: lifecycleOf(window, instance), ops: opSequences(opFrames) };
}

let t: TestSim;
let tap: EventTap;

beforeAll(async () => {
  t = await startTestSim({ seed: 7 });
});
afterAll(async () => t.close());

async function simulate(
  instance: string,
  setup: 'Running' | 'Stopped' | 'Frozen',
  action: () => Promise<void>,
  snapshots: string[] = [],
): Promise<{ lifecycle: string[]; ops: string[] }> {
  t.sim.controls.addInstance({ name: instance, status: setup });
  for (const s of snapshots) await t.waitOp(await t.api('POST', `/1.0/instances/${instance}/snapshots`, { name: s }));
  tap = await t.events();
  // The setup's own events, if any reach the tap, are not the scenario's.
  await drained(t.sim, tap, instance);
  tap.frames.length = 0;
  await action();
  await drained(t.sim, tap, instance);
  tap.close();
  const fs = tap.frames.filter((f) => f.type !== 'logging');
  return { lifecycle: lifecycleOf(fs, instance), ops: opSequences(fs) };
}

const state = (name: string, body: Record<string, unknown>) => async () => {
  await t.waitOp(await t.api('PUT', `/1.0/instances/${name}/state`, body));
};

const scenarios: {
  mark: string;
  instance: string;
  setup: 'Running' | 'Stopped' | 'Frozen';
  run: (name: string) => () => Promise<void>;
  snapshots?: string[];
}[] = [
  { mark: 'start', instance: 'research-a', setup: 'Stopped', run: (n) => state(n, { action: 'start' }) },
  { mark: 'freeze', instance: 'research-a', setup: 'Running', run: (n) => state(n, { action: 'freeze' }) },
  { mark: 'freeze-again', instance: 'research-a', setup: 'Frozen', run: (n) => state(n, { action: 'freeze' }) },
  { mark: 'unfreeze', instance: 'research-a', setup: 'Frozen', run: (n) => state(n, { action: 'unfreeze' }) },
  { mark: 'start-running', instance: 'research-a', setup: 'Running', run: (n) => state(n, { action: 'start' }) },
  { mark: 'stop-force', instance: 'research-a', setup: 'Running', run: (n) => state(n, { action: 'stop', force: true }) },
  {
    // The capture sent two stops here (lxc stop, then lxc stop -f); both fail late.
    mark: 'stop-stopped',
    instance: 'research-a',
    setup: 'Stopped',
    run: (n) => async () => {
      await state(n, { action: 'stop' })();
      await state(n, { action: 'stop', force: true })();
    },
  },
  { mark: 'restart-force', instance: 'research-a', setup: 'Running', run: (n) => state(n, { action: 'restart', force: true }) },
  { mark: 'graceful-stop-b', instance: 'research-b', setup: 'Running', run: (n) => state(n, { action: 'stop' }) },
  { mark: 'graceful-restart-b', instance: 'research-b', setup: 'Running', run: (n) => state(n, { action: 'restart' }) },
  {
    mark: 'kill9',
    instance: 'research-a',
    setup: 'Running',
    run: (n) => async () => {
      t.sim.controls.crash(n);
      await tap.until((f) => f.metadata.action === 'instance-shutdown');
    },
  },
  {
    mark: 'snap-create',
    instance: 'research-a',
    setup: 'Running',
    run: (n) => async () => {
      await t.waitOp(await t.api('POST', `/1.0/instances/${n}/snapshots`, { name: 's1' }));
    },
  },
  {
    mark: 'snap-delete',
    instance: 'research-a',
    setup: 'Running',
    snapshots: ['snap0'],
    run: (n) => async () => {
      await t.waitOp(await t.api('DELETE', `/1.0/instances/${n}/snapshots/snap0`));
    },
  },
];

describe('replay of the LXD 5.0.2 capture against the simulator', () => {
  for (const s of scenarios) {
    it(`${s.mark}: same lifecycle actions and operation status codes as the real daemon`, async () => {
      const real = captured(s.mark, s.instance);
      expect(real.lifecycle.length + real.ops.length).toBeGreaterThan(0);
      const sim = await simulate(s.instance, s.setup, s.run(s.instance), s.snapshots);
      await t.api('PUT', `/1.0/instances/${s.instance}/state`, { action: 'stop', force: true }).then((r) => t.waitOp(r));
      await until(`${s.instance} stopped`, async () => (await t.api('GET', `/1.0/instances/${s.instance}`)).body.metadata.status_code === 102);
      await t.waitOp(await t.api('DELETE', `/1.0/instances/${s.instance}`));
      expect(sim).toEqual(real);
    });
  }
});
