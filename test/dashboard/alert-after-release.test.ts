import { afterEach, describe, expect, it } from 'vitest';
import { Alerts } from '../../src/alerts/alerts.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { keySpace } from '../../src/redis/key-space.js';
import { releaseQuarantine } from '../../src/remediation/operator-actions.js';
import { closeNotifier, NotifierFixture } from '../notify/notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from '../notify/recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  alerts: { kind: string; status: string; instance: string }[];
}

/** An operator's release ends the crash loop's episode: its alert does not stay firing with nothing to say why. */
describe('a quarantine release resolves the crash-loop alert', () => {
  let fx: NotifierFixture | undefined;
  let server: RecordingServer | undefined;
  afterEach(() => closeNotifier(fx, server));

  it('resolves the firing crash-loop alert of the released instance, audited with who released it', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.webhookReplica(server.url, { groupBy: ['kind'] });
    const keys = keySpace(fx.prefix);
    const audit = new AuditLog(fx.redis, keys.audit);
    const alerts = new Alerts({ audit, notifier });
    const ref = { target: 'local', project: 'default', instance: 'loop-1' };
    await alerts.raise({
      kind: 'instance.crash-loop',
      severity: 'critical',
      ...ref,
      summary: 'loop-1 quarantined after 5 restarts',
      correlationId: 'evt-loop',
    });
    await until('the firing message', () => server!.requests.length === 1);
    await fx.redis.set(keys.quarantine(ref), JSON.stringify({ since: Date.now(), holder: null }));

    expect(await releaseQuarantine({ redis: fx.redis, keys, audit, alerts }, ref, { origin: 'console', actor: 'alice' })).toBe(true);

    await until('the resolved message', () => server!.requests.length === 2);
    expect(server.requests.flatMap((r) => (r.json as Body).alerts.map((a) => `${a.kind} ${a.instance}:${a.status}`))).toEqual([
      'instance.crash-loop loop-1:firing',
      'instance.crash-loop loop-1:resolved',
    ]);
    expect(await notifier.board.firing()).toEqual([]);
    const resolution = (await audit.read({ type: 'alert' })).find((r) => (r as { resolved?: boolean }).resolved);
    expect(resolution?.summary).toBe('instance.crash-loop resolved: operator alice released default/loop-1 from quarantine (from the console)');
  });
});
