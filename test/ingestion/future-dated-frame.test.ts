import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import { StatusCode } from '../../src/client/status-code.js';
import { EventArchive } from '../../src/events/event-archive.js';
import type { Stack } from '../support/stack.js';
import { until } from '../support/wait.js';
import type { SentAlert } from '../notify/recording-server.js';
import { startWebOneStack } from './support/ingestion-bed.js';

const DAY_MS = 24 * 3600_000;

/**
 * A frame dated a day ahead (a daemon whose clock stepped forward, a forged frame) must not make
 * every later real transition of the instance look older than it: the frame is processed at its
 * receipt time, audited and alerted with the time it carried, and the real crash after it is healed.
 * The simulator sends the frame as it is; a real LXD cannot be made to date one event ahead
 * without stepping its host's clock, so this runs on the simulator only.
 */
describe('an event dated in the future does not disable healing (simulator, bundled rules)', () => {
  let stack: Stack | undefined;
  const alerts = () => stack!.webhook!.requests.flatMap((r) => (r.json as { alerts: SentAlert[] }).alerts);
  const trail = (instance: string): Promise<StoredAuditRecord[]> => new AuditLog(stack!.redis, stack!.keys.audit).read({ instance });

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  async function startReflexOnSim(clockToleranceMs?: number): Promise<Stack> {
    stack = await startWebOneStack('future', clockToleranceMs !== undefined ? { clockToleranceMs } : {});
    return stack;
  }

  const futureStart = (at: number) => ({
    type: 'lifecycle' as const,
    timestamp: new Date(at).toISOString(),
    project: 'default',
    metadata: { action: 'instance-started', source: '/1.0/instances/web-1', name: 'web-1', project: 'default' },
  });

  it('a frame dated a day ahead is audited and alerted with its time, and the real crash after it is healed', async () => {
    const { sim } = await startReflexOnSim();
    const dated = Date.now() + DAY_MS;
    sim.controls.injectFrame(futureStart(dated));
    await until('the future-dated frame audited', async () => (await trail('web-1')).some((r) => r.type === 'alert'));
    const alert = (await trail('web-1')).find((r) => r.type === 'alert')!;
    expect(alert.summary).toContain(`event dated ${new Date(dated).toISOString()}, ahead of its receipt`);
    expect(alert).toMatchObject({ severity: 'warning' });

    sim.controls.crash('web-1');
    await until('the crash healed', async () => (await trail('web-1')).some((r) => r.type === 'outcome'), 15_000);
    await until('web-1 Running again', () => sim.controls.statusCode('web-1') === StatusCode.Running);
    expect(sim.controls.calls('web-1', 'start'), 'one start, by the bundled rule').toBe(1);

    await until('the future-timestamp alert sent', () => alerts().some((a) => a.kind === 'event.future-timestamp'));
    const sent = alerts().filter((a) => a.kind === 'event.future-timestamp');
    expect(sent, 'alerted once').toHaveLength(1);
    expect(sent[0]).toMatchObject({ severity: 'warning', instance: 'web-1', status: 'firing' });
  });

  it("with a tolerance wider than the frame's lead, the frame is trusted and the crash after it is dropped as stale (what the tolerance prevents)", async () => {
    const { sim, redis, keys } = await startReflexOnSim(2 * DAY_MS);
    sim.controls.injectFrame(futureStart(Date.now() + DAY_MS));
    await until('the future-dated frame processed', async () => (await trail('web-1')).some((r) => r.type === 'event'));
    sim.controls.crash('web-1');
    const archive = new EventArchive({ redis, key: keys.archive });
    const staleShutdown = async () =>
      (await archive.read({ outcome: 'stale' })).some((a) => a.event.kind === 'instance.status' && a.event.action === 'instance-shutdown');
    await until('the crash archived as stale', staleShutdown, 15_000);
    expect(sim.controls.statusCode('web-1')).toBe(StatusCode.Stopped);
    expect((await trail('web-1')).filter((r) => r.type === 'alert' || r.type === 'outcome')).toEqual([]);
  });
});
