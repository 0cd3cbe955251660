import { describe, expect, it } from 'vitest';
import { causedBy } from '../../src/events/intent.js';
import { decodeFrame } from '../../src/events/frame.js';
import { normalizeFrame } from '../../src/events/normalize.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { capturedFrameAt, capturedFrames } from '../support/fixture-events.js';

function typed(raw: string): CanonicalEvent {
  const d = decodeFrame(raw);
  if (!d.ok) throw new Error(d.reason);
  const e = normalizeFrame(d.frame, 'unix:///test');
  if (!e) throw new Error('no event');
  return e;
}

describe('typing the real LXD 5.0.2 event stream', () => {
  it('accepts every one of the 385 captured frames', () => {
    const frames = capturedFrames();
    expect(frames).toHaveLength(385);
    const rejected = frames.map(decodeFrame).filter((d) => !d.ok);
    expect(rejected).toEqual([]);
  });

  it('reads kill -9 of init as Stopped (102) that nobody asked for', () => {
    const e = typed(capturedFrameAt('2026-11-22T06:36:43.5'));
    expect(e).toMatchObject({
      kind: 'instance.status',
      instance: 'research-a',
      to: 102,
      intent: 'unrequested',
      action: 'instance-shutdown',
      project: 'default',
      location: 'none',
    });
  });

  it('reads a graceful lxc stop as Stopped requested through the API', () => {
    const e = typed(capturedFrameAt('2026-11-22T06:37:15.9'));
    expect(e).toMatchObject({ kind: 'instance.status', instance: 'research-b', to: 102, intent: 'requested' });
  });

  it('reads a restart as a single Running transition', () => {
    expect(typed(capturedFrameAt('2026-11-22T06:36:38.8'))).toMatchObject({
      kind: 'instance.status',
      to: 103,
      intent: 'requested',
      action: 'instance-restarted',
    });
  });

  it('reads a guest reboot as an unrequested shutdown followed by an unrequested restart', () => {
    expect(typed(capturedFrameAt('2026-11-22T06:36:58.5'))).toMatchObject({ to: 102, intent: 'unrequested' });
    expect(typed(capturedFrameAt('2026-11-22T06:36:58.6'))).toMatchObject({ to: 103, intent: 'unrequested', action: 'instance-restarted' });
  });

  it('keeps snapshot events as lifecycle events, not status changes of the instance', () => {
    expect(typed(capturedFrameAt('2026-11-22T06:36:24.33'))).toMatchObject({
      kind: 'lifecycle',
      action: 'instance-snapshot-created',
      instance: 'research-a',
    });
  });

  it('reads operation frames with their instances from either resource key', () => {
    const e = typed(capturedFrames()[0]!);
    expect(e).toMatchObject({ kind: 'operation.status', to: 105, class: 'task', instances: ['research-a'] });
  });

  it('gives the same frame the same id and different frames different ids', () => {
    const frames = capturedFrames();
    const ids = frames.map((f) => typed(f).id);
    expect(new Set(ids).size).toBe(frames.length);
    expect(typed(frames[10]!).id).toBe(typed(frames[10]!).id);
  });

  it('rejects malformed frames with a reason instead of throwing', () => {
    expect(decodeFrame('{not json')).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
    expect(decodeFrame('{"type":"lifecycle","timestamp":"x","metadata":{}}')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('timestamp'),
    });
    expect(decodeFrame('{"type":"lifecycle","timestamp":"2026-11-22T06:36:43Z","metadata":{"source":"/1.0/instances/a"}}')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('metadata.action'),
    });
  });
});

describe("telling Reflex's own operations from an operator's", () => {
  const failedStart = { action: 'start', state: 'failed' as const, sentAt: 1_000, createdAt: 1_000, endedAt: 1_050 };
  const at = (ms: number) => new Date(ms).toISOString();

  it("takes an operator's start right after a start of Reflex's that failed for the operator's, not for Reflex's echo", () => {
    expect(causedBy(failedStart, { intent: 'requested', action: 'instance-started', timestamp: at(1_300) })).toBe(false);
  });

  it("still takes the shutdown that follows Reflex's failed start for its echo, and a successful start's instance-started for Reflex's", () => {
    expect(causedBy(failedStart, { intent: 'unrequested', action: 'instance-shutdown', timestamp: at(1_600) })).toBe(true);
    expect(causedBy({ ...failedStart, state: 'done' }, { intent: 'requested', action: 'instance-started', timestamp: at(1_300) })).toBe(true);
  });
});
