import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { auditTrail, eventOf, waitForAudit } from '../support/audit-trail.js';
import {
  createTestProject,
  deleteTestProject,
  describeBed,
  lxdBed,
  startReflexOn,
  STATUS_RUNNING,
  TEST_INSTANCE_PREFIX,
  type DaemonBed,
} from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import type { ReflexProcess } from '../support/reflex-process.js';
import { appendedAt, expectOneDecisionPerRule, show, type StoredAuditRecord } from './trail.js';

/**
 * Real LXD, issue 12: two projects hold an instance of the same name. A start of Reflex's that
 * fails in one (LXD then sends a spurious `instance-shutdown`, notes §2) must not make a crash of
 * the other look like an echo of Reflex's own action.
 */

const optIn = { 'user.reflex.autorestart': 'true' };

/**
 * The project an audit record is about. `reflex audit --instance NAME` filters by name only, so
 * the trail mixes both instances; records may not carry the project themselves, but an event
 * record carries the canonical event, which has it.
 */
function projectOf(r: StoredAuditRecord): string | undefined {
  const rec = r as StoredAuditRecord & { project?: unknown; event?: { project?: unknown } };
  const project = rec.project ?? rec.event?.project;
  return typeof project === 'string' ? project : undefined;
}

/** A record saying an action of Reflex's failed (the outcome of an attempt, a give-up, a refused call). */
function isFailedStart(r: StoredAuditRecord): boolean {
  return (['outcome', 'retry', 'give-up'].includes(r.type) && /fail|gave up/i.test(r.summary)) || (r.type === 'call' && /refused/i.test(r.summary));
}

await describeBed(lxdBed, 'instances of the same name in two projects, on real LXD', () => {
  it("heals a crash in one project right after Reflex's start of the same-named instance in another project failed", async () => {
    const prefix = uniquePrefix('rem-projects');
    const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
    let project: string | undefined;
    let projectBed: DaemonBed | undefined;
    let reflex: ReflexProcess | undefined;
    try {
      project = await createTestProject(lxdBed);
      projectBed = lxdBed.inProject(project);
      reflex = startReflexOn(lxdBed, redisUrl(), prefix);
      await reflex.waitUntilWatching();
      await lxdBed.launch({ name, config: optIn });
      await projectBed.launch({ name, config: optIn });
      // Both starts recorded: Reflex tracks both instances Running.
      await waitForAudit(
        redisUrl(),
        prefix,
        name,
        (rs) => new Set(rs.filter((r) => r.type === 'event' && (eventOf(r) as { to?: number } | undefined)?.to === 103).map(projectOf)).size === 2,
        15_000,
      );

      // Applies at the next start only: Reflex's start of the crashed default/NAME fails (in ~5 s).
      await lxdBed.cli(['config', 'set', name, 'raw.lxc', 'lxc.init.cmd=/nonexistent']);
      const defaultCrashedAt = Date.now();
      await lxdBed.crash(name);
      const failed = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some(isFailedStart), 30_000);
      const since = failed.filter((r) => r.type === 'event' && projectOf(r) === project && appendedAt(r) >= defaultCrashedAt);
      expect(since, `premise: nothing happened in ${project} since the crash in default\n${show(failed)}`).toEqual([]);

      const crashedAt = Date.now();
      await projectBed.crash(name);
      const trail = await waitForAudit(
        redisUrl(),
        prefix,
        name,
        (rs) => rs.some((r) => r.type === 'event' && projectOf(r) === project && appendedAt(r) >= crashedAt),
        15_000,
      );
      const crash = trail.find((r) => r.type === 'event' && projectOf(r) === project && appendedAt(r) >= crashedAt)!;
      expect(crash.summary, `the crash in ${project} is not taken for an echo of the failed start in default\n${show(trail)}`).toMatch(
        /\bunrequested\b/,
      );

      await projectBed.waitForStatus(name, STATUS_RUNNING, 15_000);
      expectOneDecisionPerRule(await auditTrail(redisUrl(), prefix, name));
    } finally {
      await reflex?.stop();
      await lxdBed.remove(name);
      if (project) {
        await projectBed?.remove(name);
        await deleteTestProject(lxdBed, project);
      }
    }
  }, 90_000);
});
