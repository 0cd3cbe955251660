import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeFrame } from '../../src/events/frame.js';
import { normalizeFrame } from '../../src/events/normalize.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';

/**
 * The events of a real Incus 6.0.4 daemon (scripts/capture-incus-events.sh; the action behind each
 * burst and its time in test/fixtures/incus-6.0-events.marks.txt), replayed through Reflex's typing:
 * every frame is accepted, and the transitions that differ from LXD 5.0.2 read right (docs/events.md).
 */
const fixture = (ext: string) => readFileSync(fileURLToPath(new URL(`../fixtures/incus-6.0-events.${ext}`, import.meta.url)), 'utf8');
const frames = fixture('jsonl')
  .split('\n')
  .filter((l) => l.trim());
const marks = new Map(
  fixture('marks.txt')
    .split('\n')
    .filter(Boolean)
    .map((l) => [l.split(' ')[1]!, l.split(' ')[0]!]),
);

function typed(raw: string): CanonicalEvent {
  const d = decodeFrame(raw);
  if (!d.ok) throw new Error(d.reason);
  const e = normalizeFrame(d.frame, 'unix:///var/lib/incus/unix.socket');
  if (!e) throw new Error(`no event from ${raw}`);
  return e;
}

/** The first lifecycle event `action` after the action marked `mark`. */
function lifecycleAfter(mark: string, action: string): CanonicalEvent {
  const at = marks.get(mark);
  if (!at) throw new Error(`no mark ${mark}`);
  const line = frames.find((l) => {
    const f = JSON.parse(l) as { type: string; timestamp: string; metadata: { action?: string } };
    return f.type === 'lifecycle' && f.metadata.action === action && f.timestamp.slice(11, 29) > at;
  });
  if (!line) throw new Error(`no ${action} after ${mark}`);
  return typed(line);
}

/** Lifecycle actions between two marks, in the capture's order. */
function actionsBetween(from: string, to: string): string[] {
  const [a, b] = [marks.get(from)!, marks.get(to)!];
  return frames
    .map((l) => JSON.parse(l) as { type: string; timestamp: string; metadata: { action?: string } })
    .filter((f) => f.type === 'lifecycle' && f.timestamp.slice(11, 29) > a && f.timestamp.slice(11, 29) < b)
    .map((f) => f.metadata.action!);
}

describe('typing the real Incus 6.0 event stream', () => {
  it('accepts every captured frame', () => {
    expect(frames.length).toBeGreaterThan(80);
    expect(frames.map(decodeFrame).filter((d) => !d.ok)).toEqual([]);
    expect(frames.map(typed).length).toBe(frames.length);
  });

  it('reads kill -9 of init as Stopped (102) that nobody asked for', () => {
    expect(lifecycleAfter('kill9', 'instance-shutdown')).toMatchObject({
      kind: 'instance.status',
      instance: 'capture-a',
      to: 102,
      intent: 'unrequested',
      project: 'default',
      location: 'none',
    });
  });

  it('reads incus stop as a requested instance-shutdown, and stop -f as a requested instance-stopped', () => {
    expect(lifecycleAfter('stop-graceful', 'instance-shutdown')).toMatchObject({ kind: 'instance.status', to: 102, intent: 'requested' });
    expect(lifecycleAfter('stop-force', 'instance-stopped')).toMatchObject({ kind: 'instance.status', to: 102, intent: 'requested' });
  });

  it('reads a restart, graceful or forced, as a single requested Running transition', () => {
    expect(actionsBetween('restart-graceful', 'restart-force')).toEqual(['instance-restarted']);
    expect(lifecycleAfter('restart-force', 'instance-restarted')).toMatchObject({ kind: 'instance.status', to: 103, intent: 'requested' });
  });

  it('reads a guest reboot as one unrequested instance-restarted, without the shutdown LXD 5.0 sends first', () => {
    expect(actionsBetween('guest-reboot', 'snap-create')).toEqual(['instance-exec', 'instance-restarted']);
    expect(lifecycleAfter('guest-reboot', 'instance-restarted')).toMatchObject({ kind: 'instance.status', to: 103, intent: 'unrequested' });
  });

  it('reads an init that exits by itself as an unrequested stop', () => {
    expect(lifecycleAfter('start-b-init-exits', 'instance-shutdown')).toMatchObject({ instance: 'capture-b', to: 102, intent: 'unrequested' });
  });

  it('keeps snapshot events as lifecycle events of the instance, not status changes', () => {
    expect(lifecycleAfter('snap-create', 'instance-snapshot-created')).toMatchObject({ kind: 'lifecycle', instance: 'capture-a' });
    expect(lifecycleAfter('snap-delete', 'instance-snapshot-deleted')).toMatchObject({ kind: 'lifecycle', instance: 'capture-a' });
  });

  it('sends nothing for a PUT refused on its ETag, and one instance-updated for the accepted one', () => {
    expect(actionsBetween('put-wrong-etag', 'put-right-etag')).toEqual([]);
    expect(actionsBetween('put-right-etag', 'stop-force2')).toEqual(['instance-updated']);
  });

  it('names the new instance in a rename, with the old name in the context', () => {
    expect(lifecycleAfter('rename', 'instance-renamed')).toMatchObject({ kind: 'lifecycle', instance: 'capture-a-renamed' });
  });

  it('reads operation frames with their instances from the instances key (Incus sends no containers key)', () => {
    const ops = frames
      .map((l) => JSON.parse(l) as { type: string; metadata: { resources?: Record<string, string[]> } })
      .filter((f) => f.type === 'operation');
    expect(ops.some((f) => f.metadata.resources && 'containers' in f.metadata.resources)).toBe(false);
    expect(typed(frames.find((l) => l.includes('"Starting instance"'))!)).toMatchObject({ kind: 'operation.status', instances: ['capture-a'] });
  });
});
