import { describe, expect, it } from 'vitest';
import { defineProbe } from '../../src/probes/probe.js';
import { ProbeOwner } from '../../src/probes/probe-owner.js';
import type { ProbeRunner } from '../../src/probes/probe-runner.js';
import type { ProbeState } from '../../src/probes/probe-state.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { sleep, until } from '../support/wait.js';
import { probeRunnerBed } from './probe-runner-bed.js';

/** A replica killed (SIGKILL): no more beats or passes, its roster entry left to run out. */
function kill(runner: ProbeRunner): void {
  const r = runner as unknown as { stopped: boolean; beatTimer?: NodeJS.Timeout; passTimer?: NodeJS.Timeout };
  r.stopped = true;
  clearInterval(r.beatTimer);
  clearTimeout(r.passTimer);
}

/** The live members a replica's probes are spread over, as it last read the roster. */
const membersOf = (runner: ProbeRunner) => (runner as unknown as { owner: { members: string[] } }).owner.members;

describe('a takeover of a killed replica’s probes (issue #43 item 3)', () => {
  const cleanups = cleanupsAfterEach();
  const names = Array.from({ length: 14 }, (_, i) => `web${i}`);

  it('checks each overdue probe on the survivor’s next pass after it drops the dead replica, not at its next slot', async () => {
    const periodMs = 3_000;
    const probe = defineProbe({ name: 'p', kind: 'exec', command: ['true'], periodMs, timeoutMs: 5_000 });
    const bed = await probeRunnerBed(cleanups, names, [probe], { member: 'a', rosterTtlMs: 4_500, listEveryMs: 1_000 });
    const b = await bed.replica({ member: 'b', rosterTtlMs: 4_500 });
    /** Every check's start per probe, as its state records it (polled every 20 ms). */
    const checks = new Map<string, number[]>();
    let polling = true;
    const poll = (async () => {
      while (polling) {
        for (const [id, raw] of Object.entries(await bed.redis.hgetall(bed.keys.probes.state))) {
          const at = (JSON.parse(raw) as ProbeState).lastAt;
          const seen = checks.get(id) ?? [];
          if (at !== undefined && seen.at(-1) !== at) checks.set(id, [...seen, at]);
        }
        await sleep(20);
      }
    })();
    cleanups.push(async () => {
      polling = false;
      await poll;
    });
    await until(
      'every probe checked twice',
      () => (checks.size === names.length && [...checks.values()].every((c) => c.length >= 2) ? true : undefined),
      60_000,
    );
    // The probes' ids hold the simulator's socket path, so how they split over a and b differs
    // from run to run: the replica that owns more of them (at least 7 of 14) is the one killed.
    const owner = new ProbeOwner();
    owner.setMembers(['a', 'b']);
    const ofA = [...checks.keys()].filter((id) => owner.ownerOf(id) === 'a');
    const ofB = [...checks.keys()].filter((id) => owner.ownerOf(id) === 'b');
    const [victim, survivor, survivorName, ofVictim] = ofA.length >= ofB.length ? [bed.runner, b, 'b', ofA] : [b, bed.runner, 'a', ofB];
    expect(ofVictim.length).toBeGreaterThanOrEqual(names.length / 2);

    kill(victim);
    await until(
      'the survivor drops the killed replica from its roster',
      () => (membersOf(survivor).join() === survivorName ? true : undefined),
      30_000,
    );
    const droppedAt = Date.now();
    await until(
      'each of the killed replica’s probes checked by the survivor',
      () => (ofVictim.every((id) => checks.get(id)!.some((at) => at >= droppedAt)) ? true : undefined),
      30_000,
    );
    // The killed replica's heartbeat (4.5 s, beating every 1.5 s) ran out at least 3 s, a period, after
    // its last check: every one of its probes is overdue, and the survivor's passes come every 750 ms
    // (a quarter period).
    const late = ofVictim
      .map((id) => ({
        id,
        lastByVictim: checks
          .get(id)!
          .filter((at) => at < droppedAt)
          .at(-1)!,
        firstBySurvivor: checks.get(id)!.find((at) => at >= droppedAt)!,
      }))
      .filter((c) => c.firstBySurvivor - droppedAt > 750 + 750);
    expect(late, `dropped at ${droppedAt}`).toEqual([]);
  }, 120_000);
});
