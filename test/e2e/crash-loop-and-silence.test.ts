import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitForAudit } from '../support/audit-trail.js';
import { describeBed, lxdBed, lxdSocketPath, STATUS_STOPPED } from '../support/daemon-bed.js';
import { redisUrl, reflexArgs, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { noActionPending } from '../support/settled.js';

await describeBed(lxdBed, 'crash loops and silences on real LXD', () => {
  const prefix = uniquePrefix('loop');
  const names: string[] = [];
  let reflex: ReflexProcess;

  beforeAll(async () => {
    reflex = startReflexProcess(
      [
        'run',
        ...reflexArgs(prefix, `unix://${lxdSocketPath()}`),
        '--rules',
        'test/fixtures/rules-crash-loop',
        '--resync-interval',
        '0',
        '--http-port',
        '0',
      ],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    await reflex.waitUntilWatching();
  });

  afterAll(async () => {
    await reflex?.stop();
    for (const n of names) await lxdBed.remove(n);
  });

  it('restarts a container that dies a second after every start only within its budget, then quarantines it with one alert', async () => {
    const name = `rt-${randomBytes(4).toString('hex')}`;
    names.push(name);
    await lxdBed.cli(['init', 'reflex-busybox', name]);
    await lxdBed.cli(['config', 'set', name, 'raw.lxc=lxc.init.cmd=/bin/sleep 1', 'user.reflex.autorestart=true']);
    await lxdBed.cli(['start', name]);

    const loop = (r: { type: string; kind?: unknown }) => r.type === 'alert' && r.kind === 'instance.crash-loop';
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some(loop), 60_000);
    await noActionPending(redisUrl(), prefix); // no restart may follow the quarantine
    const after = await waitForAudit(redisUrl(), prefix, name, () => true);
    const calls = after.filter((r) => r.type === 'call');
    expect(calls).toHaveLength(3);
    expect(after.filter(loop)).toHaveLength(1);
    expect(trail.find(loop)!.summary).toMatch(/crash-looping: 3 restarts/);
    expect((await lxdBed.status(name)).status_code).toBe(STATUS_STOPPED);
    const notes = after.filter((r) => r.type === 'decision' && r.matched).map((r) => r.summary);
    expect(notes.slice(0, 3)).toEqual([
      expect.stringMatching(/restart 1 of the budget$/),
      expect.stringMatching(/restart 2 of the budget, after a back-off of 500 ms/),
      expect.stringMatching(/restart 3 of the budget, after a back-off of 1000 ms/),
    ]);
  }, 90_000);

  it('suppresses the remediation of a silenced instance and records it', async () => {
    const name = await lxdBed.launch({ config: { 'user.reflex.autorestart': 'true' } });
    names.push(name);
    const added = await runReflex(['silence', 'add', '--instance', name, '--duration', '10m', '--reason', 'maintenance test', ...reflexArgs(prefix)]);
    expect(added.code, added.stderr).toBe(0);
    await lxdBed.crash(name);
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'decision'), 30_000);
    expect(trail.find((r) => r.type === 'decision')!.summary).toMatch(/^suppressed by silence \w+ until .*: maintenance test$/);
    await noActionPending(redisUrl(), prefix);
    expect((await lxdBed.status(name)).status_code).toBe(STATUS_STOPPED);
    expect(trail.filter((r) => r.type === 'call')).toEqual([]);
  }, 60_000);
});
