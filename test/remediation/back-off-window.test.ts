import { expect, it } from 'vitest';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { describeBed, lxdBed, startReflexOn, STATUS_RUNNING, STATUS_STOPPED } from '../support/daemon-bed.js';
import { ownRedis } from '../support/own-redis.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import type { ReflexProcess } from '../support/reflex-process.js';
import { sleep } from '../support/wait.js';
import { aboutIncident, appendedAt, crashEvents, expectOneDecisionPerRule, show, startCallsSince, type StoredAuditRecord } from './trail.js';
import { noActionPending } from '../support/settled.js';

/**
 * Real LXD, issue 12: an action held back by the crash-loop back-off must re-check the instance at
 * the moment it acts. What the operator did during the wait wins; the skip is in the audit.
 */

/** The bundled restart-on-crash rule reads its initial back-off from this variable. */
const BACKOFF_MS = 8_000;
/** Time after the back-off ends for the delayed action to have run (or been skipped) and recorded it. */
const MARGIN_MS = 5_000;
const optIn = { 'user.reflex.autorestart': 'true' };

/** `reflex run` (a process of its own) on the LXD bed, its crash-loop back-off {@link BACKOFF_MS}. */
function runReflexWithBackOff(prefix: string, url = redisUrl()): ReflexProcess {
  return startReflexOn(lxdBed, url, prefix, { env: { REFLEX_CRASHLOOP_BACKOFF_MS: String(BACKOFF_MS) } });
}

/**
 * Waits until the incident's delayed start is settled: `skipped` finds in the trail the record saying what became
 * of it, and no action is left in the queue, so nothing can start the instance any more.
 */
async function settled(
  prefix: string,
  name: string,
  skipped: (trail: StoredAuditRecord[]) => boolean,
  timeoutMs: number,
  url = redisUrl(),
): Promise<StoredAuditRecord[]> {
  await waitForAudit(url, prefix, name, skipped, timeoutMs);
  await noActionPending(url, prefix);
  return auditTrail(url, prefix, name);
}

/**
 * Crashes the instance twice: the first restart of the budget is immediate, the second is held
 * back by the back-off. Returns the second incident's correlation id and when it was decided,
 * once the instance is Stopped and the delayed start is pending.
 */
async function crashIntoBackOff(prefix: string, name: string, url = redisUrl()): Promise<{ correlationId: string; decidedAt: number }> {
  await lxdBed.crash(name);
  await lxdBed.waitForStatus(name, STATUS_RUNNING, 10_000);
  await waitForAudit(url, prefix, name, (rs) => rs.some((r) => r.type === 'outcome'), 10_000);

  await lxdBed.crash(name);
  const trail = await waitForAudit(
    url,
    prefix,
    name,
    (rs) => {
      const second = crashEvents(rs)[1];
      return second !== undefined && rs.some((r) => r.type === 'decision' && r.correlationId === second.correlationId);
    },
    10_000,
  );
  const second = crashEvents(trail)[1]!;
  const decision = trail.find((r) => r.type === 'decision' && r.correlationId === second.correlationId)!;
  expect(decision.summary, `premise: the second restart is held back by the back-off\n${show(trail)}`).toMatch(/back-off/);
  expect((await lxdBed.status(name)).status_code, 'premise: Stopped while the delayed start waits').toBe(STATUS_STOPPED);
  return { correlationId: second.correlationId, decidedAt: appendedAt(decision) };
}

/**
 * Runs `body` on an opted-in container that crashed into the back-off ({@link crashIntoBackOff}),
 * with Reflex watching it on the keys of a fresh prefix labelled `label` in the Redis at `url`;
 * then stops Reflex and deletes the container.
 */
async function inBackOff(
  label: string,
  url: string,
  body: (b: { prefix: string; name: string; incident: { correlationId: string; decidedAt: number } }) => Promise<void>,
): Promise<void> {
  const prefix = uniquePrefix(label);
  const reflex = runReflexWithBackOff(prefix, url);
  let name: string | undefined;
  try {
    await reflex.waitUntilWatching();
    name = await lxdBed.launch({ config: optIn });
    await body({ prefix, name, incident: await crashIntoBackOff(prefix, name, url) });
  } finally {
    await reflex.stop();
    if (name) await lxdBed.remove(name);
  }
}

await describeBed(lxdBed, 'the crash-loop back-off re-checks the instance before it acts, on real LXD', () => {
  it('leaves a container stopped when the operator opts it out during the back-off, and records the skip', async () => {
    await inBackOff('rem-optout', redisUrl(), async ({ prefix, name, incident }) => {
      await lxdBed.cli(['config', 'set', name, 'user.reflex.autorestart', 'false']);
      const optedOutAt = Date.now();
      expect(optedOutAt, 'premise: the opt-out happened before the back-off ended').toBeLessThan(incident.decidedAt + BACKOFF_MS);

      const isSkip = (r: StoredAuditRecord) =>
        (r.type === 'decision' || r.type === 'outcome') && /skip/i.test(r.summary) && /opt|condition|autorestart/i.test(r.summary);
      const trail = await settled(
        prefix,
        name,
        (rs) => aboutIncident(rs, incident.correlationId).some(isSkip),
        incident.decidedAt + BACKOFF_MS + MARGIN_MS - Date.now(),
      );
      expect((await lxdBed.status(name)).status, `the delayed start undid the opt-out\n${show(trail)}`).toBe('Stopped');
      const skip = aboutIncident(trail, incident.correlationId).filter(isSkip);
      expect(skip, `a record says the delayed start was skipped because of the opt-out\n${show(trail)}`).not.toEqual([]);
      expect(startCallsSince(trail, optedOutAt), 'no start call after the opt-out').toEqual([]);
      expectOneDecisionPerRule(trail);
    });
  }, 90_000);

  it('leaves a container stopped when the operator starts it by hand and stops it with lxc stop during the back-off', async () => {
    await inBackOff('rem-manual', redisUrl(), async ({ prefix, name, incident }) => {
      await lxdBed.start(name);
      await lxdBed.waitForStatus(name, STATUS_RUNNING, 5_000);
      const stopIssuedAt = Date.now();
      await lxdBed.cli(['stop', name], 20_000);
      expect(Date.now(), 'premise: the operator stopped it before the back-off ended').toBeLessThan(incident.decidedAt + BACKOFF_MS);

      const isSkip = (r: StoredAuditRecord) => r.type !== 'event' && r.type !== 'call' && /skip|supersed/i.test(r.summary);
      const trail = await settled(
        prefix,
        name,
        (rs) => aboutIncident(rs, incident.correlationId).some(isSkip),
        incident.decidedAt + BACKOFF_MS + MARGIN_MS - Date.now(),
      );
      expect((await lxdBed.status(name)).status, `the delayed start undid the operator's lxc stop\n${show(trail)}`).toBe('Stopped');
      const skip = aboutIncident(trail, incident.correlationId).filter(isSkip);
      expect(skip, `a record says the delayed start was skipped or superseded\n${show(trail)}`).not.toEqual([]);
      expect(startCallsSince(trail, stopIssuedAt), "no start call after the operator's stop").toEqual([]);
      // `\brequested` does not match "unrequested".
      const operatorStop = trail.filter(
        (r) => r.type === 'event' && appendedAt(r) >= stopIssuedAt && /\brequested\b/.test(r.summary) && !/→ ?(Running\b|103\b)/.test(r.summary),
      );
      expect(operatorStop, `the operator's lxc stop is recorded as requested\n${show(trail)}`).not.toEqual([]);
      expectOneDecisionPerRule(trail);
    });
  }, 90_000);
  it("leaves a container stopped when the operator starts and stops it during a Redis outage in the back-off: the delayed start, due during the outage, runs as Redis comes back, before the operator's events", async () => {
    // Redis of this test's own, stopped and started again; the restart keeps the delayed job (AOF).
    const redis = await ownRedis();
    try {
      await inBackOff('rem-outage', redis.url, async ({ prefix, name, incident }) => {
        await redis.stop();
        await lxdBed.start(name);
        await lxdBed.waitForStatus(name, STATUS_RUNNING, 5_000);
        await lxdBed.cli(['stop', name], 20_000);
        expect(Date.now(), 'premise: the operator stopped it before the back-off ended').toBeLessThan(incident.decidedAt + BACKOFF_MS);
        // The point of the test: Redis stays down past the back-off, and past the 5 s for which the daemon lists a finished operation.
        await sleep(incident.decidedAt + BACKOFF_MS + 6_000 - Date.now());
        await redis.start();

        const trail = await waitForAudit(
          redis.url,
          prefix,
          name,
          (rs) => aboutIncident(rs, incident.correlationId).some((r) => r.type === 'outcome'),
          20_000,
        );
        const final = await settled(
          prefix,
          name,
          (rs) => aboutIncident(rs, incident.correlationId).some((r) => r.type === 'outcome'),
          10_000,
          redis.url,
        );
        expect((await lxdBed.status(name)).status, `the delayed start undid the operator's lxc stop\n${show(final)}`).toBe('Stopped');
        // Skipped at the moment of acting (the daemon's last_used_at), or removed before it ran if the
        // operator's events, written as Redis came back, were processed first: either way superseded.
        expect(
          aboutIncident(trail, incident.correlationId).find((r) => r.type === 'outcome'),
          show(final),
        ).toMatchObject({ result: 'skipped', summary: expect.stringMatching(/superseded/) });
        expectOneDecisionPerRule(final);
      });
    } finally {
      await redis.stop();
      redis.remove();
    }
  }, 90_000);
});
