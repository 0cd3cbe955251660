import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';
import { waitForAudit } from '../support/audit-trail.js';
import { settled } from '../support/settled.js';
import { redisUrl } from '../support/redis.js';
import { startReflexBed, type ReflexBed } from './reflex-bed.js';
import { until } from '../support/wait.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';

/** A rule that runs a command when an operator starts an instance, with `params` and `extra` spliced in. */
function execOnStart(params: string, extra = ''): Record<string, string> {
  return {
    'check.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({ name: 'check-on-start', on: { kind: 'instance.status', to: [StatusCode.Running], intent: ['requested'] }, actions: [{ action: 'exec', params: ${params}${extra} }] });
`,
  };
}

async function operatorStart(bed: ReflexBed, name: string): Promise<void> {
  bed.sim.controls.addInstance({ name, status: 'Stopped' });
  await settled(redisUrl(), bed.prefix); // its creation decided on first, so the start is the operator's news alone
  await (await bed.client.changeState(name, { action: 'start' })).wait({ timeoutMs: 10_000 });
}

describe('the exec action (simulator)', () => {
  const stopped = stoppedAfterEach();

  it('records exit code, stdout, stderr and duration of a failing command, and runs its onFailure branch instead of giving up', async () => {
    const bed = stopped(
      await startReflexBed(
        execOnStart(
          `{ command: ['sh', '-c', 'echo out; echo err >&2; exit 3'], timeout: '5s' }`,
          `, onFailure: [{ action: 'restart', params: { force: true } }]`,
        ),
      ),
    );
    await operatorStart(bed, 'web1');
    const trail = await waitForAudit(redisUrl(), bed.prefix, 'web1', (rs) =>
      rs.some((r) => r.type === 'outcome' && String(r.summary).startsWith('restart')),
    );
    const exec = trail.find((r) => r.type === 'call' && r.exitCode !== undefined)!;
    expect(exec).toMatchObject({
      action: 'exec',
      command: ['sh', '-c', 'echo out; echo err >&2; exit 3'],
      exitCode: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      timedOut: false,
      stdoutTruncated: false,
    });
    expect(exec.durationMs).toEqual(expect.any(Number));
    const failed = trail.find((r) => r.type === 'outcome' && r.code === 'EXEC_FAILED')!;
    expect(failed.summary).toMatch(/exited with 3 \(expected 0\); running its onFailure branch \(restart\)$/);
    const queued = trail.filter((r) => r.type === 'action').map((r) => r.jobId);
    expect(queued).toHaveLength(2);
    expect(String(queued[1])).toBe(`${queued[0]}-f0`);
    expect(trail.find((r) => r.type === 'outcome' && String(r.summary).startsWith('restart'))).toMatchObject({ result: 'done' });
    // The crash's own alert fires; nothing gave up.
    expect(trail.filter((r) => r.type === 'give-up' || (r.type === 'alert' && r.kind !== 'instance.crashed'))).toEqual([]);
  }, 60_000);

  it('runs the onFailure branch of any action whose retries are spent (a start the daemon keeps calling busy), not a give-up', async () => {
    const bed = stopped(
      await startReflexBed({
        'restart.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({ name: 'restart', on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] }, actions: [{ action: 'start', onFailure: [{ action: 'snapshot', params: { name: 'evidence' } }] }] });
`,
      }),
    );
    bed.sim.controls.addInstance({ name: 'web5' });
    bed.sim.controls.failNext('web5', 3, 'Instance is busy running a "stop" operation');
    bed.sim.controls.crash('web5');
    const trail = await waitForAudit(redisUrl(), bed.prefix, 'web5', (rs) =>
      rs.some((r) => r.type === 'outcome' && String(r.summary).startsWith('snapshot')),
    );
    expect(trail.filter((r) => r.type === 'outcome' && r.result === 'retrying')).toHaveLength(2);
    expect(trail.find((r) => r.type === 'outcome' && r.result === 'failed')).toMatchObject({ code: 'API_BUSY', attempt: 3 });
    expect(trail.find((r) => r.type === 'outcome' && r.result === 'failed')!.summary).toMatch(/; running its onFailure branch \(snapshot\)$/);
    expect(trail.find((r) => r.type === 'outcome' && String(r.summary).startsWith('snapshot'))).toMatchObject({ result: 'done' });
    // The crash's own alert fires; nothing gave up.
    expect(trail.filter((r) => r.type === 'give-up' || (r.type === 'alert' && r.kind !== 'instance.crashed'))).toEqual([]);
    expect((await bed.client.listSnapshots('web5')).map((sn) => sn.name)).toEqual(['evidence']);
  }, 60_000);

  it('kills a command that outlives its timeout and records it as timed out (no onFailure: the usual give-up)', async () => {
    const bed = stopped(await startReflexBed(execOnStart(`{ command: ['sleep', '30'], timeout: '1s' }`)));
    const started = Date.now();
    await operatorStart(bed, 'web2');
    const trail = await waitForAudit(redisUrl(), bed.prefix, 'web2', (rs) => rs.some((r) => r.type === 'give-up'));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(trail.find((r) => r.type === 'call' && r.timedOut !== undefined)).toMatchObject({ timedOut: true, exitCode: 137 });
    expect(trail.find((r) => r.type === 'outcome' && r.result === 'failed')).toMatchObject({ code: 'EXEC_TIMEOUT', attempt: 1 });
  }, 60_000);

  it("succeeds on an expected exit code; Reflex's own exec triggers no rule, an operator's does", async () => {
    const bed = stopped(
      await startReflexBed({
        ...execOnStart(`{ command: ['sh', '-c', 'exit 1'], expect: [0, 1] }`),
        'on-exec.ts': `import { defineRule } from 'reflex-lxd';
export default defineRule({ name: 'on-exec', on: { kind: 'lifecycle', action: ['instance-exec'] }, actions: [{ action: 'exec', params: { command: ['true'] } }] });
`,
      }),
    );
    await operatorStart(bed, 'web3');
    // Bounds that only limit how long a failure takes to show: the in-process suites run niced beside
    // the real-daemon suites in CI, and a starved exec takes many times its idle time.
    const trail = await waitForAudit(redisUrl(), bed.prefix, 'web3', (rs) => rs.some((r) => r.type === 'outcome'), 90_000);
    expect(trail.find((r) => r.type === 'outcome')).toMatchObject({ result: 'done' });
    await settled(redisUrl(), bed.prefix); // a decision on Reflex's own exec would be in a queue first
    const after = await waitForAudit(redisUrl(), bed.prefix, 'web3', () => true);
    expect(after.filter((r) => r.type === 'decision' && r.rule === 'on-exec')).toEqual([]);

    // The same command run by an operator is news to the rules. An instance-exec within 500 ms of the
    // end of Reflex's own exec is taken as its echo (src/events/intent.ts, causedBy): the operator acts
    // after that window, as an operator does (its end is before the outcome was audited).
    const ownEnd = Date.parse(trail.find((r) => r.type === 'outcome')!.at);
    await until("the window of Reflex's own exec passed", () => Date.now() > ownEnd + 1_000, 5_000, 20);
    await (await bed.client.exec('web3', { command: ['true'] })).wait({ timeoutMs: 60_000 });
    const operator = await waitForAudit(
      redisUrl(),
      bed.prefix,
      'web3',
      (rs) => rs.some((r) => r.type === 'decision' && r.rule === 'on-exec'),
      90_000,
    );
    expect(operator.find((r) => r.type === 'decision' && r.rule === 'on-exec')).toMatchObject({ matched: true });
    // Its own exec, in turn, triggers nothing: one matched decision, one outcome of on-exec.
    await until(
      'the on-exec outcome',
      async () => (await waitForAudit(redisUrl(), bed.prefix, 'web3', () => true)).some((r) => r.type === 'outcome' && r.rule === 'on-exec'),
      90_000,
    );
    await settled(redisUrl(), bed.prefix); // a second decision of on-exec would be in a queue first
    const final = await waitForAudit(redisUrl(), bed.prefix, 'web3', () => true);
    expect(final.filter((r) => r.type === 'decision' && r.rule === 'on-exec')).toHaveLength(1);
  }, 300_000);

  it('in dry-run records what it would run and sends no exec', async () => {
    const bed = stopped(
      await startReflexBed({
        'check.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({ name: 'check-dry', dryRun: true, on: { kind: 'instance.status', to: [StatusCode.Running], intent: ['requested'] }, actions: [{ action: 'exec', params: { command: ['sh', '-c', 'exit 3'] } }] });
`,
      }),
    );
    await operatorStart(bed, 'web4');
    const trail = await waitForAudit(redisUrl(), bed.prefix, 'web4', (rs) => rs.some((r) => r.type === 'outcome'));
    expect(trail.find((r) => r.type === 'outcome')).toMatchObject({
      result: 'dry-run',
      summary: 'exec: would POST /1.0/instances/web4/exec?project=default (exec)',
    });
    expect(trail.filter((r) => r.type === 'call')).toEqual([
      expect.objectContaining({ method: 'POST', path: '/1.0/instances/web4/exec?project=default', command: ['sh', '-c', 'exit 3'], dryRun: true }),
    ]);
    expect(bed.sim.controls.calls('web4', 'exec')).toBe(0);
  }, 60_000);

  it('refuses to load a rule whose onFailure names an unknown action, or gives it bad params', async () => {
    mkdirSync(resolve('.tmp'), { recursive: true });
    const dir = mkdtempSync(join(resolve('.tmp'), 'rules-'));
    writeFileSync(join(dir, 'bad.ts'), execOnStart(`{ command: ['true'] }`, `, onFailure: [{ action: 'no-such-action' }]`)['check.ts']!);
    writeFileSync(
      join(dir, 'bad-params.ts'),
      execOnStart(`{ command: ['true'] }`, `, onFailure: [{ action: 'exec', params: { command: [] } }]`)['check.ts']!.replace(
        "'check-on-start'",
        "'check-2'",
      ),
    );
    const loaded = await loadRulesFolder(dir);
    expect(loaded.rules).toEqual([]);
    expect(loaded.errors.map((e) => e.message).sort()).toEqual([
      expect.stringMatching(/^rule "check-2": onFailure of exec: exec params: command: /),
      expect.stringMatching(/^rule "check-on-start": unknown action "no-such-action" in onFailure of exec; known: start, /),
    ]);
  }, 30_000);
});
