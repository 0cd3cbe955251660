import { afterAll, describe, expect, it } from 'vitest';
import type { OperationStatusEvent } from '../../src/events/canonical-event.js';
import { StatusCode } from '../../src/client/status-code.js';
import { keySpace } from '../../src/redis/key-space.js';
import { heldDownSince, OperatorRequests } from '../../src/remediation/operator-requests.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/**
 * What the re-check asks of the operator's requests seen on the stream (seed 179019817): their last
 * word since the instance last started, a stop or freeze holding it down even when the daemon
 * refused it, a start of theirs after it releasing it, Reflex's own operations never counted.
 * On a private Redis; the end-to-end cases are promise-seeds.test.ts and, on the real daemons,
 * real-stop-during-stop-hook.test.ts.
 */

const redis = redisClient();
afterAll(() => redis.quit());

const ref = { target: 'local', project: 'default', instance: 'web-1' };
const t0 = Date.parse('2026-12-02T03:00:00Z');

/** One frame of an operation on web-1, `ms` after t0. */
function frame(id: string, description: string, to: number, ms: number, err = ''): OperationStatusEvent {
  return {
    kind: 'operation.status',
    id: `${id}-${to}`,
    target: 'local',
    location: 'none',
    project: 'default',
    timestamp: new Date(t0 + ms).toISOString(),
    synthetic: false,
    operationId: id,
    to,
    class: 'task',
    description,
    err,
    instances: ['web-1'],
  };
}

function fresh(own: string[] = []) {
  const requests = new OperatorRequests(redis, keySpace(uniquePrefix('op-req')));
  const observe = (f: OperationStatusEvent) => requests.observe(ref, f, async () => own);
  return { requests, observe };
}

describe("the operator's requests seen on the stream", () => {
  it('keeps a refused stop with the time of its first frame and the daemon’s refusal, whatever order its frames come in', async () => {
    const { requests, observe } = fresh();
    await observe(frame('op-a', 'Stopping instance', StatusCode.Pending, 15));
    await observe(frame('op-a', 'Stopping instance', StatusCode.Failure, 40, 'The instance is already stopped'));
    await observe(frame('op-a', 'Stopping instance', StatusCode.Running, 16));
    expect(await requests.list(ref)).toEqual([
      { operationId: 'op-a', action: 'stop', at: t0 + 15, status: StatusCode.Failure, err: 'The instance is already stopped' },
    ]);
  });

  it('holds the instance down after a stop or a freeze since its last start, refused or not', async () => {
    const { requests, observe } = fresh();
    await observe(frame('op-a', 'Stopping instance', StatusCode.Failure, 15, 'The instance is already stopped'));
    expect(heldDownSince(await requests.list(ref), t0, [])?.operationId).toBe('op-a');
    await observe(frame('op-b', 'Freezing instance', StatusCode.Success, 30));
    expect(heldDownSince(await requests.list(ref), t0, [])?.action).toBe('freeze');
  });

  it('lets a start of the operator’s after their stop be their last word, even one the daemon refused', async () => {
    const { requests, observe } = fresh();
    await observe(frame('op-a', 'Stopping instance', StatusCode.Failure, 15, 'The instance is already stopped'));
    await observe(
      frame(
        'op-b',
        'Starting instance',
        StatusCode.Failure,
        30,
        'Failed to create instance start operation: Instance is busy running a "stop" operation',
      ),
    );
    expect(heldDownSince(await requests.list(ref), t0, [])).toBeUndefined();
  });

  it('does not count a stop from before the instance last started', async () => {
    const { requests, observe } = fresh();
    await observe(frame('op-a', 'Stopping instance', StatusCode.Success, 15));
    expect(heldDownSince(await requests.list(ref), t0 + 1_000, [])).toBeUndefined();
  });

  it('never counts Reflex’s own operations: not recorded when known, not counted when learnt later', async () => {
    const known = fresh(['op-own']);
    await known.observe(frame('op-own', 'Stopping instance', StatusCode.Success, 15));
    expect(await known.requests.list(ref)).toEqual([]);
    // The reply with the operation's id came after its frame was recorded.
    const late = fresh();
    await late.observe(frame('op-own', 'Stopping instance', StatusCode.Success, 15));
    expect(heldDownSince(await late.requests.list(ref), t0, ['op-own'])).toBeUndefined();
  });

  it('records state changes only, and forgets requests ten minutes older than the newest', async () => {
    const { requests, observe } = fresh();
    await observe(frame('op-u', 'Updating instance', StatusCode.Success, 5));
    await observe(frame('op-a', 'Stopping instance', StatusCode.Success, 10));
    await observe(frame('op-b', 'Starting instance', StatusCode.Success, 600_011));
    expect((await requests.list(ref)).map((r) => r.operationId)).toEqual(['op-b']);
  });
});
