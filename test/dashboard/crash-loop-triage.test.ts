import { describe, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { episodesOf, incidentsOf } from '../../src/http/console/incident-story.js';
import { instanceTimeline } from '../../src/http/console/instance-timeline.js';

let seq = 0;
const record = (at: string, fields: Record<string, unknown>) => ({ id: `${Date.parse(at)}-${seq++}`, at, ...fields }) as unknown as StoredAuditRecord;
const crash = (correlationId: string, at: string) =>
  record(at, {
    type: 'event',
    correlationId,
    instance: 'web-1',
    summary: 'web-1 Running → Stopped (unrequested)',
    event: {
      kind: 'instance.status',
      to: 102,
      intent: 'unrequested',
      timestamp: at,
      target: 'local',
      project: 'default',
      instance: 'web-1',
      location: 'none',
    },
  });
const triage = (correlationId: string, at: string, actor: string, fields: Record<string, unknown>) =>
  record(at, { type: 'triage', correlationId, instance: 'web-1', summary: `${actor} triaged`, actor, origin: 'console', ...fields });

/** A crash loop is one incident in the console: its triage is the triage of every crash in it, whichever crash was newest when someone acted. */
describe('the triage of a crash loop', () => {
  it('keeps the first acknowledgement, the last assignment and every note across the loop’s crashes', () => {
    const records = [
      crash('c1', '2026-12-02T10:00:00.000Z'),
      triage('c1', '2026-12-02T10:00:30.000Z', 'alice', { triage: 'ack' }),
      triage('c1', '2026-12-02T10:00:40.000Z', 'alice', { triage: 'assign', assignee: 'bob' }),
      crash('c2', '2026-12-02T10:02:00.000Z'),
      triage('c2', '2026-12-02T10:02:10.000Z', 'bob', { triage: 'ack' }),
      triage('c2', '2026-12-02T10:02:20.000Z', 'bob', { triage: 'note', note: 'looping on a bad config' }),
      crash('c3', '2026-12-02T10:04:00.000Z'),
      triage('c3', '2026-12-02T10:04:05.000Z', 'bob', { triage: 'assign', assignee: 'carol' }),
    ];
    const [loop, ...rest] = episodesOf(incidentsOf(records));
    expect(rest).toEqual([]);
    expect(loop?.loop?.count).toBe(3);
    expect(loop?.triage).toMatchObject({
      acknowledged: { by: 'alice', at: '2026-12-02T10:00:30.000Z' },
      assignee: { name: 'carol', by: 'bob' },
      notes: [{ by: 'bob', text: 'looping on a bad config' }],
    });
  });

  it('marks each triage step on the instance’s state timeline, as an operator’s', () => {
    const records = [
      crash('c1', '2026-12-02T10:00:00.000Z'),
      triage('c1', '2026-12-02T10:00:30.000Z', 'alice', { triage: 'ack' }),
      triage('c1', '2026-12-02T10:00:40.000Z', 'alice', { triage: 'assign', assignee: 'bob' }),
    ];
    const t = instanceTimeline(
      records,
      [],
      incidentsOf(records),
      'web-1',
      Date.parse('2026-12-02T09:00:00.000Z'),
      Date.parse('2026-12-02T11:00:00.000Z'),
    );
    expect(t.marks.filter((m) => m.kind === 'operator').map((m) => m.text)).toEqual(['alice: acknowledged', 'alice: assigned it to bob']);
  });
});
