import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { Trail } from '../../src/remediation/trail.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/**
 * The records of one incident as the trail recorder writes them, on a private Redis: the shapes
 * the console, the dashboard and the tests read, each step recorded once when it is run again.
 */

const redis = redisClient();
afterAll(() => redis.quit());

function trail(): { audit: AuditLog; trail: Trail } {
  const audit = new AuditLog(redis, `${uniquePrefix('trail')}:audit`);
  return { audit, trail: new Trail(audit, { correlationId: 'ev-1', target: 'local', instance: 'web-1', rule: 'restart-crashed' }) };
}

const job = { jobId: 'restart-crashed:ev-1:0', action: 'start' };

describe('the remediation trail of one incident', () => {
  it('writes a rule decision once per event and rule, with the instance uuid when known', async () => {
    const { audit, trail: t } = trail();
    const withUuid = t.with({ uuid: 'u-1' });
    await withUuid.decision('matched', { matched: true });
    await withUuid.decision('matched again', { matched: true });
    await t.with({ rule: 'other' }).decision('no opt-in', { matched: false });
    const records = await audit.read({ type: 'decision' });
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      correlationId: 'ev-1',
      target: 'local',
      instance: 'web-1',
      rule: 'restart-crashed',
      summary: 'matched',
      matched: true,
      uuid: 'u-1',
    });
    expect(records[1]).toMatchObject({ rule: 'other', matched: false });
    expect(records[1]).not.toHaveProperty('uuid');
  });

  it('writes a suppressed decision under its own once-key when one is given', async () => {
    const { audit, trail: t } = trail();
    await t.decision('in cooldown', { matched: true, suppressed: true });
    await t.decision('budget moved', { matched: true }, 'renamed-budget:ev-1');
    expect(await audit.read({ type: 'decision' })).toMatchObject([
      { summary: 'in cooldown', matched: true, suppressed: true },
      { summary: 'budget moved', matched: true },
    ]);
  });

  it('writes a queued job once, as an action record naming the job', async () => {
    const { audit, trail: t } = trail();
    await t.queued(job, 'queued start');
    await t.queued(job, 'queued start');
    expect(await audit.read({ type: 'action' })).toEqual([
      expect.objectContaining({ type: 'action', summary: 'queued start', jobId: job.jobId, rule: 'restart-crashed' }),
    ]);
  });

  it("writes a delayed job (or a request for approval) superseded by an operator's decision once, in the words it is read by", async () => {
    const { audit, trail: t } = trail();
    await t.superseded(job, 'by a requested transition (stop → 102)');
    await t.superseded(job, 'by a requested transition (stop → 102)');
    const renamed = { ...job, jobId: 'restart-crashed:ev-1:1' };
    await t.superseded(renamed, ": web-1 was renamed to web-2 (an operator's decision)");
    const held = { action: 'start', jobId: 'approval:ap-1', approval: 'ap-1' };
    await t.superseded(held, 'by a requested transition (stop → 102)');
    expect(await audit.read({ type: 'outcome' })).toMatchObject([
      {
        summary: `start skipped: superseded by a requested transition (stop → 102); the delayed job ${job.jobId} was removed`,
        result: 'skipped',
        recheck: 'superseded',
        jobId: job.jobId,
      },
      { summary: `start skipped: superseded: web-1 was renamed to web-2 (an operator's decision); the delayed job ${renamed.jobId} was removed` },
      { summary: 'start skipped: superseded by a requested transition (stop → 102); the request for approval ap-1 was withdrawn' },
    ]);
  });

  it('writes a job skipped or held at the moment of acting once, naming the check that stopped it', async () => {
    const { audit, trail: t } = trail();
    await t.skipped('storm', 'a storm on member m1', job, 'held');
    await t.skipped('superseded', 'a later look', job);
    expect(await audit.read({ type: 'outcome' })).toEqual([
      expect.objectContaining({
        summary: 'start held at the moment of acting: a storm on member m1',
        result: 'skipped',
        recheck: 'storm',
        jobId: job.jobId,
      }),
    ]);
  });

  it('writes an event once per event id, with the event', async () => {
    const { audit } = trail();
    const event = {
      kind: 'lifecycle',
      id: 'ev-9',
      target: 'local',
      project: 'default',
      location: 'none',
      timestamp: new Date().toISOString(),
      synthetic: false,
      action: 'instance-deleted',
      source: '/1.0/instances/web-1',
      instance: 'web-1',
    } as const;
    const t = Trail.ofEvent(audit, event as never, 'web-1');
    await t.event(event as never, 'deleted');
    await t.event(event as never, 'deleted');
    expect(await audit.read({ type: 'event' })).toEqual([
      expect.objectContaining({
        correlationId: 'ev-9',
        target: 'local',
        instance: 'web-1',
        summary: 'deleted',
        event: expect.objectContaining({ id: 'ev-9' }),
      }),
    ]);
  });
});
