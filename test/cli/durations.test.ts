import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { parseDuration, readDuration } from '../../src/config/duration.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { reflexInProcess } from './in-process.js';

describe('durations', () => {
  it('read simple and compound forms, weeks included, and bare numbers as ms', () => {
    const readsAs: Record<string, number> = {
      '500ms': 500,
      '90s': 90_000,
      '15m': 900_000,
      '1h30m': 5_400_000,
      '2w': 1_209_600_000,
      '7d': 604_800_000,
      '1d12h': 129_600_000,
      '1.5h': 5_400_000,
      '1m30s250ms': 90_250,
      ' 40s ': 40_000,
      '0': 0,
      '250': 250,
    };
    for (const [text, ms] of Object.entries(readsAs)) expect(readDuration(text), text).toBe(ms);
  });

  it('refuse anything else, naming the forms', () => {
    for (const bad of ['soon', '', '-5s', '1 h', 'h', '5x', '1h 30m', '1e3']) expect(readDuration(bad), bad).toBeUndefined();
    expect(() => parseDuration('soon')).toThrow(/"soon" is not a duration \(expected e\.g\. .*1h30m.*2w/);
  });

  it('are accepted by the config file fields in ms, and refused by field name when they do not parse', () => {
    const c = parseConfig({
      resyncIntervalMs: '1h30m',
      leaseTtlMs: '5s',
      ruleTimeoutMs: 2_000,
      archiveMaxAgeMs: '2w',
      stormWindowMs: '90s',
      autorestartStandBackMs: '75s',
      resyncGraceMs: '1500ms',
    });
    expect(c).toMatchObject({
      resyncIntervalMs: 5_400_000,
      leaseTtlMs: 5_000,
      ruleTimeoutMs: 2_000,
      archiveMaxAgeMs: 1_209_600_000,
      stormWindowMs: 90_000,
      autorestartStandBackMs: 75_000,
      resyncGraceMs: 1_500,
    });
    expect(() => parseConfig({ resyncIntervalMs: 'soon' })).toThrow(/resyncIntervalMs: not a duration .*\(got "soon"\)/);
    // The bounds of a field still hold for a duration string.
    expect(() => parseConfig({ leaseTtlMs: '2m' })).toThrow(/leaseTtlMs: .*60000/);
  });

  it('are read from a YAML config file and the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-durations-'));
    try {
      writeFileSync(join(dir, 'config.yaml'), 'target: unix:///x.sock\nleaseTtlMs: 5s\narchiveMaxAgeMs: 2w\n');
      const res = await reflexInProcess(['run', '--print-config', '--config', join(dir, 'config.yaml')], { REFLEX_RESYNC_INTERVAL_MS: '1m30s' });
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ leaseTtlMs: 5_000, archiveMaxAgeMs: 1_209_600_000, resyncIntervalMs: 90_000 });
      const bad = await reflexInProcess(['run', '--print-config', '--target', 'unix:///x.sock'], { REFLEX_RESYNC_INTERVAL_MS: 'soon' });
      expect(bad.code).toBe(3);
      expect(bad.stderr).toMatch(/resyncIntervalMs: not a duration/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a duration option takes 1h30m, and refuses soon with exit 2 and one line', async () => {
    const common = ['--redis', redisUrl(), '--prefix', uniquePrefix('dur')];
    const ok = await reflexInProcess(['silence', 'add', '--instance', 'web-1', '--duration', '1h30m', '--reason', 'upgrade', ...common]);
    expect(ok.code, ok.stderr).toBe(0);
    const [s] = JSON.parse((await reflexInProcess(['silence', 'list', '--json', ...common])).stdout) as { createdAt: string; until: string }[];
    expect(Date.parse(s!.until) - Date.parse(s!.createdAt)).toBe(5_400_000);

    const bad = await reflexInProcess(['silence', 'add', '--instance', 'web-1', '--duration', 'soon', '--reason', 'upgrade', ...common]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "reflex: option '--duration <time>' argument 'soon' is invalid. expected a duration such as 500ms, 90s, 15m, 1h30m, 7d, 2w\n",
    );
  });
});
