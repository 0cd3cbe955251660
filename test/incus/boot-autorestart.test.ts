import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, describeBed, incusBed, startReflexOn } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { sleep } from '../support/wait.js';
import { appendedAt, show, startCallsSince } from '../remediation/trail.js';

/**
 * Real Incus 6.0 `boot.autorestart` (issue 13). The container's init dies a second after every start
 * until the test drops `/keep` into it: Incus restarts it by itself (lifecycle `instance-restarted`,
 * no `instance-shutdown`) until it gives up and emits `instance-shutdown`. Reflex must make no start
 * while Incus retries, and one start after the give-up, once its stand-back is over. The timings
 * measured here are written down in docs/rules.md.
 */
const STAND_BACK_MS = 5_000;
const FLAKY_INIT = `#!/bin/sh
# Reflex test: crash a second after every start, unless the test has said to stay up.
[ -e /keep ] && exec /sbin/testinit
sleep 1
`;

await describeBed(incusBed, 'Incus boot.autorestart on the real daemon', () => {
  it('makes no start while Incus restarts a crashing container itself, and one start once Incus gives up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-incus-ar-'));
    const config = join(dir, 'reflex.yaml');
    writeFileSync(config, `autorestartStandBackMs: ${STAND_BACK_MS}\n`);
    const prefix = uniquePrefix('incus-ar');
    // No periodic resync: one landing in the sub-second Stopped moment between two of Incus' restarts
    // would add a stop of unknown cause (alerted, not acted on; docs/rules.md) and make the trail vary.
    const reflex = startReflexOn(incusBed, redisUrl(), prefix, { args: ['--config', config, '--resync-interval', '0'] });
    let name: string | undefined;
    const monitor = incusBed.monitor();
    try {
      await reflex.waitForLog('event stream connected');
      await monitor.listening();
      name = await incusBed.launch({
        config: { 'user.reflex.autorestart': 'true', 'boot.autorestart': 'true' },
        init: '/sbin/flakyinit',
        files: { '/sbin/flakyinit': FLAKY_INIT },
        start: false,
      });
      const n = name;
      await incusBed.cli(['start', n]);
      const startedAt = (await monitor.heard(n, 'instance-started')).at;
      const gaveUpAt = (await monitor.heard(n, 'instance-shutdown', 90_000)).at;
      const restarts = monitor.events.filter((e) => e.instance === n && e.action === 'instance-restarted' && e.at < gaveUpAt).map((e) => e.at);
      await incusBed.cli(['file', 'push', '-', `${n}/keep`]).catch(async () => {
        // A start by Reflex may already be under way: the marker is only needed before its init runs.
        await incusBed.cli(['file', 'push', '-', `${n}/keep`]);
      });
      await incusBed.waitForStatus(n, STATUS_RUNNING, STAND_BACK_MS + 15_000);
      const runningAt = Date.now();
      // The point of the test is how many starts Reflex made: 3 s of quiet in which no second one may come.
      await sleep(3_000);
      const trail = await waitForAudit(redisUrl(), prefix, n, (rs) => rs.some((r) => r.type === 'outcome'), 10_000).then(() =>
        auditTrail(redisUrl(), prefix, n),
      );
      const gaps = restarts.map((at, i) => at - (i === 0 ? startedAt : restarts[i - 1]!));
      process.stdout.write(
        `incus boot.autorestart measured: ${restarts.length} restarts by Incus, ${gaps.map((g) => (g / 1000).toFixed(1)).join(' ')} s apart; gave up ${((gaveUpAt - startedAt) / 1000).toFixed(1)} s after the first start; Running again ${((runningAt - gaveUpAt) / 1000).toFixed(1)} s after the give-up\n`,
      );

      expect(restarts.length, 'Incus restarted the container by itself before giving up').toBe(10);
      expect(
        startCallsSince(trail).filter((r) => appendedAt(r) < gaveUpAt),
        `no start by Reflex while Incus retried\n${show(trail)}`,
      ).toEqual([]);
      const starts = startCallsSince(trail);
      expect(starts, `exactly one start by Reflex, after the give-up\n${show(trail)}`).toHaveLength(1);
      expect(appendedAt(starts[0]!) - gaveUpAt, 'the start waited for the stand-back').toBeGreaterThanOrEqual(STAND_BACK_MS - 500);
      expect(
        trail.some((r) => r.type === 'decision' && r.summary.includes(`boot.autorestart is on: standing back ${STAND_BACK_MS} ms`)),
        show(trail),
      ).toBe(true);
      expect((await incusBed.status(n)).status_code).toBe(STATUS_RUNNING);
    } finally {
      monitor.stop();
      await reflex.stop();
      if (name) await incusBed.remove(name);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
