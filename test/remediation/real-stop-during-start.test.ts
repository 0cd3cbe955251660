import { afterAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { GIVE_BACK_STOP_TIMEOUT_S } from '../../src/remediation/act/give-back.js';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_STOPPED, describeEachBed, reflexWatchingSuite, type DaemonBed } from '../support/daemon-bed.js';
import { operationEnd, operatorStop } from '../support/daemon-socket.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { noActionPending } from '../support/settled.js';
import { appendedAt, runningTracked, show, startCallsSince } from './trail.js';

/**
 * On the real daemons (LXD 5.0.2, Incus 6.0): a container crashes, Reflex starts it, and the
 * operator stops it the moment Reflex's start operation appears on the event stream. The daemon
 * refuses a stop that meets a start in flight ("The instance is already stopped", or "Instance is
 * busy running a "start" operation": a stop sent within some 100 ms of the start, measured), and
 * no re-check before the start could have seen a request sent after it. Reflex looks at the
 * operator's requests once its start has ended, finds the stop, and stops the container again: it
 * ends Stopped, the start audited as given back (src/remediation/act/give-back.ts).
 */

interface OperationFrame {
  id: string;
  description: string;
  status_code: number;
  resources?: Record<string, string[]> | null;
}

/**
 * The operator: listens to the daemon's operation events and, as soon as a start of `name` is
 * created, sends a stop as `lxc stop` sends it. Resolves with the stop's operation id.
 */
function stopOnStart(
  bed: DaemonBed,
  name: string,
): { listening: Promise<void>; stopped: Promise<{ startId: string; stopId: string; status: number }>; close(): void } {
  const ws = new WebSocket(`ws+unix://${bed.socket}:/1.0/events?type=operation`);
  const listening = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const stopped = new Promise<{ startId: string; stopId: string; status: number }>((resolve, reject) => {
    let sent = false;
    ws.on('message', (data) => {
      const op = (JSON.parse(String(data)) as { metadata: OperationFrame }).metadata;
      const about = Object.values(op.resources ?? {})
        .flat()
        .some((p) => p.split('?')[0] === `/1.0/instances/${name}`);
      if (sent || !about || op.description !== 'Starting instance') return;
      sent = true;
      operatorStop(bed, name).then(({ id, status }) => resolve({ startId: op.id, stopId: id, status }), reject);
    });
  });
  return { listening, stopped, close: () => ws.close() };
}

await describeEachBed("an operator's stop that meets Reflex's start in flight", (bed: DaemonBed) => {
  const prefix = uniquePrefix('start-stop');
  const created: string[] = [];
  afterAll(async () => {
    for (const name of created) await bed.remove(name);
  });
  reflexWatchingSuite(bed, redisUrl(), prefix);

  it(
    'is honoured: the daemon refused it, and Reflex stops the container again once its start has ended',
    async () => {
      const name = await bed.launch({ config: { 'user.reflex.autorestart': 'true' } });
      created.push(name);
      await runningTracked(redisUrl(), prefix, name);
      const operator = stopOnStart(bed, name);
      try {
        await operator.listening;
        const crashedAt = Date.now();
        await bed.crash(name);
        const { startId, stopId, status } = await operator.stopped;
        expect(status, 'the daemon takes the stop, and answers it in its operation').toBe(202);
        const stopEnd = await operationEnd(bed, stopId);
        await waitForAudit(
          redisUrl(),
          prefix,
          name,
          (rs) => rs.some((r) => r.type === 'outcome' && appendedAt(r) >= crashedAt && (r as { result?: string }).result !== 'retrying'),
          // The give-back's clean stop can be lost: a stop sent the moment the start ends may reach the
          // container before its init has set its trap (pid 1 ignores a signal it has no handler for), and
          // the daemon then waits out the timeout before Reflex forces it. CI saw it.
          GIVE_BACK_STOP_TIMEOUT_S * 1000 + 30_000,
        );
        await noActionPending(redisUrl(), prefix);
        const trail = await auditTrail(redisUrl(), prefix, name);
        const starts = startCallsSince(trail, crashedAt);
        expect(
          starts.map((r) => r.operationId),
          `one start, the one the operator's stop met\n${show(trail)}`,
        ).toEqual([startId]);
        expect((await bed.status(name)).status_code, `the operator's stop (${JSON.stringify(stopEnd)}) stands\n${show(trail)}`).toBe(STATUS_STOPPED);
        const given = trail.find((r) => r.type === 'outcome' && /given back: .*superseded: a stop was requested through the API/.test(r.summary));
        if (stopEnd?.status === 'Failure') {
          // The race this test is for: the daemon refused the operator's stop, and only Reflex's give-back stopped it.
          expect(given?.summary, show(trail)).toContain(stopId);
          expect(given?.summary, show(trail)).toMatch(
            /\(operation [0-9a-f-]+, not Reflex's; refused by the daemon: [^)]*\), while this start ran; an operator's decision is never undone: stopped again(, forced when a clean shutdown failed \(.*\))? \(operation [0-9a-f-]+\)$/,
          );
        }
        console.info(
          `${bed.name}: the operator's stop ${stopEnd?.status === 'Failure' ? `was refused (${stopEnd.err}); Reflex stopped the container again` : `ended ${stopEnd?.status ?? 'unseen'}`}: ${given?.summary ?? 'no give-back needed'}`,
        );
      } finally {
        operator.close();
      }
    },
    GIVE_BACK_STOP_TIMEOUT_S * 1000 + 90_000,
  );
});
