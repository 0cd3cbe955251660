import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import type { Alert } from '../../src/alerts/alert.js';
import type { AlertsView } from '../../src/notify/alert-board.js';
import { makeIdentity, type TestIdentity } from '../conformance/lxd-https.js';
import { startRecordingServer, type RecordingServer } from '../notify/recording-server.js';
import { testWebhookSecret } from '../notify/notifier-fixture.js';
import { eventOf, fullTrail, trailLines, waitForAudit } from '../support/audit-trail.js';
import { describeBed, STATUS_RUNNING, STATUS_STOPPED } from '../support/daemon-bed.js';
import {
  clusterBed,
  clusterInstanceStatus,
  killMember,
  memberDir,
  memberLxc,
  memberSocket,
  moveToMember,
  restoreMembers,
  waitForMember,
} from '../support/lxd-cluster-bed.js';
import { redisUrl, reflexRunArgs, uniquePrefix } from '../support/redis.js';
import { sleep } from '../support/wait.js';
import { runningTracked } from '../remediation/trail.js';
import { noActionPending } from '../support/settled.js';
import { runReflex, startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';

/**
 * Issue 16 on the real two-member cluster of scripts/lxd-cluster-testbed.sh: an instance moved
 * between members, a member whose daemon dies, failover of the event stream between members'
 * addresses. Members are killed with SIGKILL (their containers keep running, as after a daemon
 * crash) and brought back by `start-member`, also when a test fails.
 */

const viaM1 = `unix://${memberSocket('m1')}`;

// A crash-loop budget of two restarts, no back-off: the budget is used up in two crashes.
const budgetRule = `import { StatusCode, configFlag, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'restart',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  when: ({ instance }) => configFlag(instance, 'user.reflex.autorestart'),
  cooldownMs: 0,
  crashLoop: { maxRestarts: 2, windowMs: 600000, initialBackoffMs: 0, maxBackoffMs: 0, resetAfterMs: 600000 },
  actions: [{ action: 'start' }],
});
`;

function rulesFolder(files: Record<string, string>): string {
  mkdirSync(resolve('.tmp'), { recursive: true });
  const dir = mkdtempSync(join(resolve('.tmp'), 'rules-'));
  for (const [file, source] of Object.entries(files)) writeFileSync(join(dir, file), source);
  return dir;
}

await describeBed(clusterBed, 'a real two-member LXD cluster: moves, a member going down, failover between members', () => {
  const created: string[] = [];
  let reflex: ReflexProcess | undefined;
  afterEach(async () => {
    await reflex?.stop();
    reflex = undefined;
    // A test that killed a member and failed leaves the bed whole for the next one.
    await restoreMembers();
  });
  afterAll(async () => {
    for (const name of created) await clusterBed.remove(name);
  });

  it("keeps an instance's crash-loop budget across `lxc move` to another member; the move's created/deleted/renamed events act on nothing", async () => {
    const prefix = uniquePrefix('cmove');
    reflex = startReflexProcess(
      ['run', '--target', viaM1, '--redis', redisUrl(), '--prefix', prefix, '--rules', rulesFolder({ 'restart.ts': budgetRule }), '--http-port', '0'],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    await reflex.waitForLog('reflex running');
    const name = await clusterBed.launch({ member: 'm2', config: { 'user.reflex.autorestart': 'true' } });
    created.push(name);
    const started = (rs: StoredAuditRecord[]) => rs.filter((r) => r.type === 'event' && eventOf(r)?.action === 'instance-started').length;
    const decisions = (rs: StoredAuditRecord[]) => rs.filter((r) => r.type === 'decision').map((r) => r.summary);
    await waitForAudit(redisUrl(), prefix, name, (rs) => started(rs) === 1, 10_000);

    for (let n = 1; n <= 2; n++) {
      await clusterBed.crash(name);
      // Restarted, and the restart's own start seen, so the next crash is a crash of a Running instance.
      await waitForAudit(redisUrl(), prefix, name, (rs) => decisions(rs).length === n && started(rs) === n + 1, 15_000);
    }

    await memberLxc('m1', ['stop', name]);
    await waitForAudit(redisUrl(), prefix, name, (rs) => decisions(rs).length === 3, 10_000);
    await moveToMember(name, 'm1');
    expect((await clusterInstanceStatus(name)).location).toBe('m1');
    await memberLxc('m1', ['start', name]);
    await clusterBed.waitForStatus(name, STATUS_RUNNING, 10_000);
    await waitForAudit(redisUrl(), prefix, name, (rs) => started(rs) === 4, 10_000);

    await clusterBed.crash(name);
    const trail = await waitForAudit(
      redisUrl(),
      prefix,
      name,
      (rs) => decisions(rs).some((d) => /quarantined|restart 3 of the budget/.test(d)),
      15_000,
    );
    expect(decisions(trail), trailLines(trail)).toEqual([
      expect.stringMatching(/restart 1 of the budget/),
      expect.stringMatching(/restart 2 of the budget/),
      expect.stringMatching(/^skipped: intent is requested/),
      expect.stringMatching(/^quarantined: crash loop \(2 restarts/),
    ]);
    // The crashes before the move were on m2, the one after it on m1: what Reflex records follows the instance.
    const crashes = trail
      .filter((r) => r.type === 'event' && eventOf(r)?.action === 'instance-shutdown' && r.summary.includes('unrequested'))
      .map((r) => eventOf(r)?.location);
    expect(crashes, trailLines(trail)).toEqual(['m2', 'm2', 'm1']);
    await noActionPending(redisUrl(), prefix);
    expect((await clusterInstanceStatus(name)).status_code, 'no start after the quarantine').toBe(STATUS_STOPPED);

    const all = await fullTrail(redisUrl(), prefix);
    // The move shows as instance-created of a temporary `lxd-move-of-<uuid>`, instance-deleted of
    // the name and instance-renamed; none of them is a decision, an action, a call or an alert.
    const moveEvents = all.filter(
      (r) => r.type === 'event' && ['instance-created', 'instance-deleted', 'instance-renamed'].includes(eventOf(r)?.action ?? ''),
    );
    expect(moveEvents.map((r) => eventOf(r)?.action).sort(), trailLines(all)).toEqual(
      expect.arrayContaining(['instance-created', 'instance-deleted', 'instance-renamed']),
    );
    const moveIds = new Set(moveEvents.map((r) => r.correlationId));
    expect(
      all.filter((r) => r.type !== 'event' && moveIds.has(r.correlationId)),
      trailLines(all),
    ).toEqual([]);
    expect(
      all.filter((r) => r.instance?.startsWith('lxd-move-of-') && r.type !== 'event'),
      trailLines(all),
    ).toEqual([]);
    const calls = trail.filter((r) => r.type === 'call' && /\bstart\b/.test(r.summary));
    expect(calls, trailLines(trail)).toHaveLength(2);
  }, 90_000);

  it("raises one member.offline alert when m2's daemon dies, inhibits the crash alert of an instance on m2, and resolves it when m2 is back", async () => {
    const prefix = uniquePrefix('cmember');
    const hook: RecordingServer = await startRecordingServer();
    const notify = JSON.stringify({
      receivers: [{ kind: 'webhook', name: 'hook', url: hook.url, secretEnv: 'HOOK_SECRET' }],
      // Member alerts go out at once; other groups wait long enough to be still pending when checked.
      route: {
        receiver: 'hook',
        groupWaitMs: 600_000,
        routes: [{ match: { kind: 'member.offline' }, receiver: 'hook', groupWaitMs: 0, groupIntervalMs: 500 }],
      },
    });
    const env = { REFLEX_NOTIFY: notify, HOOK_SECRET: testWebhookSecret };
    try {
      const name = await clusterBed.launch({ member: 'm2' }); // not opted in: its crash alerts and nothing heals it
      created.push(name);
      reflex = startReflexProcess(['run', '--target', viaM1, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--http-port', '0'], {
        REFLEX_LOG_LEVEL: 'info',
        ...env,
      });
      await reflex.waitForLog('reflex running');
      const alerts = async (): Promise<AlertsView> => {
        const res = await runReflex(['alerts', '--json', '--redis', redisUrl(), '--prefix', prefix], env);
        if (res.code !== 0) throw new Error(`reflex alerts failed (${res.code}): ${res.stderr}`);
        return JSON.parse(res.stdout) as AlertsView;
      };
      const crashAlert = (v: AlertsView) =>
        v.groups.flatMap((g) => g.alerts).find((a) => a.alert.instance === name && a.alert.kind === 'instance.crashed');
      await runningTracked(redisUrl(), prefix, name); // the resync has read the instance Running
      await clusterBed.crash(name);
      await expect.poll(async () => crashAlert(await alerts())?.alert.status, { timeout: 10_000, interval: 250 }).toBe('firing');
      expect(crashAlert(await alerts())?.muted).toBeUndefined();

      await killMember('m2');
      const offlineAt = await waitForMember('m2', 'Offline', 45_000);
      const memberMessages = () =>
        hook.requests.map((r) => r.json as { status: string; alerts: Alert[] }).filter((m) => m.alerts.some((a) => a.kind === 'member.offline'));
      // The member watch reads the members every 15 s: the alert follows the cluster's verdict within one interval.
      await expect.poll(() => memberMessages().some((m) => m.status === 'firing'), { timeout: 18_000, interval: 100 }).toBe(true);
      expect(Date.now() - offlineAt).toBeLessThan(18_000);
      const offline = memberMessages()[0]!.alerts.find((a) => a.kind === 'member.offline')!;
      expect(offline).toMatchObject({ instance: 'member:m2', member: 'm2', status: 'firing' });
      const whileDown = crashAlert(await alerts());
      expect(whileDown?.muted, JSON.stringify(whileDown)).toMatch(/inhibit/i);

      await restoreMembers();
      const onlineAt = Date.now();
      await expect.poll(() => memberMessages().some((m) => m.status === 'resolved'), { timeout: 18_000, interval: 100 }).toBe(true);
      expect(Date.now() - onlineAt).toBeLessThan(18_000);
      const sent = memberMessages().flatMap((m) => m.alerts.filter((a) => a.kind === 'member.offline').map((a) => `${a.instance} ${a.status}`));
      expect(sent).toEqual(['member:m2 firing', 'member:m2 resolved']);
    } finally {
      await hook.close();
    }
  }, 120_000);

  it('trips a storm on m2 only when restarts of instances there keep failing; a crash on m1 meanwhile is still healed', async () => {
    const prefix = uniquePrefix('cstorm');
    // Two instances on m2 that crash again right after the rule restarted them are two failing
    // remediations: with a threshold of 2 the bundled rule is in a storm on m2 (back-off 1 ms).
    reflex = startReflexProcess(['run', '--target', viaM1, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--http-port', '0'], {
      REFLEX_LOG_LEVEL: 'info',
      REFLEX_STORM_THRESHOLD: '2',
      REFLEX_CRASHLOOP_BACKOFF_MS: '1',
    });
    await reflex.waitForLog('reflex running');
    const optIn = { 'user.reflex.autorestart': 'true' };
    const [a1, a2, a3, b1] = await Promise.all([
      clusterBed.launch({ member: 'm2', config: optIn }),
      clusterBed.launch({ member: 'm2', config: optIn }),
      clusterBed.launch({ member: 'm2', config: optIn }),
      clusterBed.launch({ member: 'm1', config: optIn }),
    ]);
    created.push(a1!, a2!, a3!, b1!);
    const started = (rs: StoredAuditRecord[]) => rs.filter((r) => r.type === 'event' && eventOf(r)?.action === 'instance-started').length;
    const decisions = (rs: StoredAuditRecord[]) => rs.filter((r) => r.type === 'decision').map((r) => r.summary);
    for (const name of [a1!, a2!, a3!, b1!]) await waitForAudit(redisUrl(), prefix, name, (rs) => started(rs) === 1, 10_000);

    for (const name of [a1!, a2!]) {
      await clusterBed.crash(name);
      await waitForAudit(redisUrl(), prefix, name, (rs) => decisions(rs).length === 1 && started(rs) === 2, 15_000);
      await clusterBed.crash(name); // fails again right after the rule brought it back
      await waitForAudit(redisUrl(), prefix, name, (rs) => decisions(rs).length === 2, 15_000);
    }

    await clusterBed.crash(a3!);
    const held = await waitForAudit(redisUrl(), prefix, a3!, (rs) => decisions(rs).length === 1, 15_000);
    expect(decisions(held)[0], trailLines(held)).toMatch(
      /^suppressed: storm: remediation by rule restart-on-crash failed for 2 instances on member m2/,
    );

    await clusterBed.crash(b1!);
    await clusterBed.waitForStatus(b1!, STATUS_STOPPED, 5_000).catch(() => undefined);
    await clusterBed.waitForStatus(b1!, STATUS_RUNNING, 15_000);
    const healed = await waitForAudit(redisUrl(), prefix, b1!, (rs) => rs.some((r) => r.type === 'outcome'), 10_000);
    expect(decisions(healed), trailLines(healed)).toEqual([expect.stringMatching(/restart 1 of the budget/)]);
    expect(
      healed.filter((r) => r.type === 'call' && /\bstart\b/.test(r.summary)),
      trailLines(healed),
    ).toHaveLength(1);

    await sleep(1_000); // a storm holds a3 back without queuing anything: a quiet period is all that shows it stays held
    expect((await clusterInstanceStatus(a3!)).status_code, 'held by the storm on m2').toBe(STATUS_STOPPED);
    const all = await fullTrail(redisUrl(), prefix);
    const stormAlerts = all.filter((r) => r.type === 'alert' && /^storm:/.test(r.summary));
    expect(stormAlerts, trailLines(all)).toHaveLength(1);
    expect(stormAlerts[0]!.summary).toMatch(/^storm: remediation by rule restart-on-crash failed for 2 instances on member m2/);
  }, 90_000);

  // While a member is unreachable, LXD lists each of its instances as a stub (status Error 112,
  // `config: null`, `devices: null`), and reading one takes LXD ~10 s to fail ("Missing event
  // connection with target cluster member"). The client reads stubs, and the resync leaves them
  // out: before, the resync failed on them (the stream reconnected for ever), then reported them
  // as Error and the event job reading one held up every event behind it for those 10 s.
  it("moves its event stream to the next member's address when the member it reads dies, and heals a crash after that once", async () => {
    // m1 holds the cluster database (m2 is a standby: two members have one voter), so with m1
    // down m2 answers nothing that needs it ("no available dqlite leader server found"). The
    // stream therefore starts on m2, which is taken away, and moves to m1. m2 holds an instance,
    // as a member usually does.
    const identity: TestIdentity = await makeIdentity('rc-reflex');
    await memberLxc('m1', ['config', 'trust', 'add', identity.certFile]);
    try {
      const name = await clusterBed.launch({ member: 'm1', config: { 'user.reflex.autorestart': 'true' } });
      created.push(name);
      created.push(await clusterBed.launch({ member: 'm2' }));
      const prefix = uniquePrefix('cfailover');
      reflex = startReflexProcess(
        [
          'run',
          '--target',
          'https://10.77.0.2:8443,https://10.77.0.1:8443',
          '--client-cert',
          identity.certFile,
          '--client-key',
          identity.keyFile,
          '--server-cert',
          join(memberDir('m1'), 'cluster.crt'),
          ...reflexRunArgs(prefix),
        ],
        { REFLEX_LOG_LEVEL: 'info' },
      );
      const connectedTo = (addr: string) => reflex!.logs.some((l) => l.msg === 'event stream connected' && String(l.url).includes(addr));
      await reflex.waitForLog('reflex running');
      await expect.poll(() => connectedTo('10.77.0.2'), { timeout: 10_000 }).toBe(true);

      await killMember('m2');
      await expect.poll(() => connectedTo('10.77.0.1'), { timeout: 20_000, interval: 100 }).toBe(true);
      const moved = reflex.logs.find((l) => l.msg === 'a cluster member did not answer; calls and the event stream move to the next address');
      expect(moved, 'the move is logged').toMatchObject({ level: 40, from: 'https://10.77.0.2:8443', to: 'https://10.77.0.1:8443' });
      // The reconnect's resync reads the instance Running, as already tracked: it records nothing to wait on.
      await sleep(1_500);
      await clusterBed.crash(name);
      await clusterBed.waitForStatus(name, STATUS_STOPPED, 5_000);
      await clusterBed.waitForStatus(name, STATUS_RUNNING, 10_000).catch(async (err: Error) => {
        const trail = await fullTrail(redisUrl(), prefix).catch(() => []);
        const logs = reflex!.logs.slice(-25).map((l) => JSON.stringify(l));
        throw new Error([err.message, 'trail:', trailLines(trail), 'reflex logs:', ...logs].join('\n'));
      });
      const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'), 5_000);
      await noActionPending(redisUrl(), prefix); // no second start can follow
      expect(
        trail.filter((r) => r.type === 'call' && /\bstart\b/.test(r.summary)),
        trailLines(trail),
      ).toHaveLength(1);
      expect(
        trail.filter((r) => r.type === 'event' && eventOf(r)?.action === 'instance-shutdown').map((r) => eventOf(r)?.location),
        trailLines(trail),
      ).toEqual(['m1']);
    } finally {
      await memberLxc('m1', ['config', 'trust', 'remove', identity.fingerprint]).catch(() => undefined);
    }
  }, 90_000);
});
