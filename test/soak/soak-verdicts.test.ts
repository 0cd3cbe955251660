import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { keyFamily } from '../../soak/sampler.js';
import { slopePerMinute, soakSectionOf, trend, withSoakSection } from '../../soak/report.js';
import type { Sample } from '../../soak/sampler.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function soak(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'soak/run.ts', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const sample = (t: number, rssMb: number, redisUsedMb: number): Sample => ({
  t,
  rssMb,
  heapUsedMb: 40,
  redisUsedMb,
  keys: 0,
  families: {},
  lag: { n: 0, p50: 0, p99: 0, max: 0 },
  eventsWaiting: 0,
  apiCalls: 0,
  events: 0,
});

describe('the soak verdict on memory', () => {
  it('gives the least-squares slope per minute', () => {
    expect(slopePerMinute([0, 60, 120, 180].map((x) => ({ x, y: 100 + (x / 60) * 9.3 })))).toBeCloseTo(9.3, 6);
    // Noise around a flat line: the slope is the fitted one, not the last minus the first.
    expect(
      slopePerMinute([
        { x: 0, y: 150 },
        { x: 60, y: 153 },
        { x: 120, y: 148 },
        { x: 180, y: 150 },
      ]),
    ).toBeCloseTo(-0.5, 6);
    expect(slopePerMinute([{ x: 0, y: 1 }])).toBe(0);
  });

  it('judges only the samples after the retention window, flat within ±10 % of their mean', () => {
    // Growth while the retention window fills, then a plateau with ±5 % of noise.
    const samples = [
      sample(0, 100, 2),
      sample(60, 130, 40),
      sample(120, 150, 80),
      sample(180, 142.5, 84),
      sample(240, 157.5, 76),
      sample(300, 150, 80),
    ];
    const rss = trend(samples, 'rssMb', 120)!;
    expect(rss.mean).toBeCloseTo(150, 6);
    expect(rss.spread).toBeCloseTo(0.05, 6);
    expect(rss.flat).toBe(true);
    expect(trend(samples, 'redisUsedMb', 120)!.flat).toBe(true);
    // Judged from the start, the filling looks like growth.
    expect(trend(samples, 'rssMb', 0)!.flat).toBe(false);
    expect(trend(samples, 'redisUsedMb', 0)!.slopeMbPerMin).toBeGreaterThan(10);
    // A straight line up is not flat, however long it runs.
    const growing = Array.from({ length: 30 }, (_, i) => sample(600 + i * 60, 150, 100 + i * 9.3));
    expect(trend(growing, 'redisUsedMb', 600)!.flat).toBe(false);
    expect(trend(samples, 'rssMb', 1_000)).toBeUndefined();
  });
});

describe('the soak section of BENCHMARKS.md', () => {
  it('replaces its own section and leaves the rest of the file as it was', () => {
    const bench = '# Benchmarks\n\n| a | b |\n\n## Notes\n\n- note\n';
    const once = withSoakSection(bench, '## Soak\n\nfirst run\n');
    expect(once.startsWith(bench.trimEnd())).toBe(true);
    expect(soakSectionOf(once)).toMatch(/^<!-- soak:begin[^\n]*-->\n## Soak\n\nfirst run\n<!-- soak:end -->$/);
    const twice = withSoakSection(`${once}\ntrailing text\n`, '## Soak\n\nsecond run');
    expect(twice).not.toMatch(/first run/);
    expect(twice).toMatch(/second run\n<!-- soak:end -->\n\ntrailing text\n$/);
    expect(twice.startsWith(bench.trimEnd())).toBe(true);
    expect(soakSectionOf(bench)).toBe('');
  });
});

describe('the soak key families', () => {
  it('counts each Reflex key family under one name, whatever the ids in the key', () => {
    const p = 'soak';
    const k = keySpace(p);
    const ref = { target: 'unix:///tmp/x/unix.socket', project: 'default', instance: 'inst-00010' };
    expect(keyFamily(p, `${k.archive}:seen:${ref.target}:0f3a9c`)).toBe('archive:seen');
    expect(keyFamily(p, `${k.audit}:once:event:abc`)).toBe('audit:once');
    expect(keyFamily(p, k.audit)).toBe('audit');
    expect(keyFamily(p, k.archive)).toBe('archive');
    expect(keyFamily(p, k.rejected)).toBe('rejected');
    expect(keyFamily(p, k.eventDone('9f86d081884c7d65'))).toBe('done');
    expect(keyFamily(p, k.inflight('start:inst-00010:1'))).toBe('inflight');
    expect(keyFamily(p, k.instanceLock(ref))).toBe('instance:lock');
    expect(keyFamily(p, k.restarts(ref))).toBe('instance:restarts');
    expect(keyFamily(p, k.state(ref.target))).toBe('target:state');
    expect(keyFamily(p, `${k.bullPrefix}:${k.eventsQueue}:1234`)).toBe('bull:events:job');
    expect(keyFamily(p, `${k.bullPrefix}:${k.eventsQueue}:1234:lock`)).toBe('bull:events:job');
    expect(keyFamily(p, `${k.bullPrefix}:${k.eventsQueue}:completed`)).toBe('bull:events:completed');
    expect(keyFamily(p, `${k.bullPrefix}:${k.actionsQueue}:wait`)).toBe('bull:actions:wait');
    expect(keyFamily(p, `${k.notify.bullPrefix}:${k.notify.deliveryQueue}:77`)).toBe('notify:bull:deliveries:job');
    expect(keyFamily(p, k.notify.groups)).toBe('notify:groups');
    expect(keyFamily(p, 'someone-else:key')).toBe('other');
  });
});

describe('the soak command line', () => {
  it('--help prints the usage and starts nothing; a bad option or value is refused with exit 2', async () => {
    const help = await soak(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run soak -- \[--minutes N\] \[--rate R\]/);
    expect(help.stdout).not.toMatch(/^soak: /m);
    const option = await soak(['--minuts', '3']);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/^soak: Unknown option '--minuts'/);
    const value = await soak(['--rate', 'fast']);
    expect(value.code).toBe(2);
    expect(value.stderr).toMatch(/^soak: --rate: expected API calls a second above 0, got fast/);
    const retention = await soak(['--retention', 'soon']);
    expect(retention.code).toBe(2);
    expect(retention.stderr).toMatch(/^soak: --retention: expected a duration/);
  });
});
