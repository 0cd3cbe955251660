import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { until } from '../support/wait.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { testWebhookSecret } from '../notify/notifier-fixture.js';
import { startRecordingServer } from '../notify/recording-server.js';
import { redisUrl } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';
import { rulesFolder, startReloadBed, startRule } from './support/reload-bed.js';

/** A rule whose `when` reads the instance without checking it is there: strict TypeScript refuses line 4. */
const typeError = `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'typed', on: { kind: 'instance.status', to: [StatusCode.Stopped] },
  when: ({ instance }) => instance.config['user.tier'] === 'web',
  actions: [{ action: 'start' }],
});
`;

/** A rule whose crash-loop budget has a string where a number belongs (line 6). */
const badField = `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'restart', on: { kind: 'instance.status', to: [StatusCode.Stopped] },
  actions: [{ action: 'start' }],
  crashLoop: {
    maxRestarts: '5' as unknown as number,
  },
});
`;

/** A rule whose \`when\` throws for instances with user.fail=true and answers for the others; it throws at line 5. */
const throwing = `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'fragile', on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  when: ({ instance }) => {
    if (instance?.config['user.fail'] === 'true') throw new Error('no tier label');
    return true;
  },
  actions: [{ action: 'start' }],
});
`;

describe('rules fail loudly', () => {
  const stopped = stoppedAfterEach();
  afterEach(() => {
    delete process.env.RULES_TEST_HOOK_SECRET;
  });

  it('reflex run refuses to start on a rule with a type error, with file:line:column and exit 3; --no-typecheck skips the check', async () => {
    const folder = rulesFolder({ 'typed.ts': typeError });
    // Nothing listens on the target: a run that got past the rules would fail on it (exit 4).
    const args = ['run', '--rules', folder.dir, '--redis', redisUrl(), '--target', 'unix:///nonexistent/reflex-test.socket', '--http-port', '0'];
    const refused = await runReflex(args);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(`${folder.dir}/typed.ts:4:27: 'instance' is possibly 'undefined'.`);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    const unchecked = await runReflex([...args, '--no-typecheck']);
    expect(unchecked.code, unchecked.stderr).toBe(4);
  }, 90_000);

  it('reflex run refuses a malformed rule with the field path at its line', async () => {
    const folder = rulesFolder({ 'restart.ts': badField, 'heal.ts': startRule('heal') });
    const refused = await runReflex([
      'run',
      '--rules',
      folder.dir,
      '--redis',
      redisUrl(),
      '--target',
      'unix:///nonexistent/reflex-test.socket',
      '--http-port',
      '0',
      '--no-typecheck',
    ]);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(
      `1 problem(s) in the rules of ${folder.dir}; not starting:\n${folder.dir}/restart.ts:6:5: invalid rule "restart": crashLoop.maxRestarts: expected number, received string\n`,
    );
  }, 60_000);

  it('a reload refused for a malformed rule names file:line and the field, in the reply, the log and the audit; so is one with a type error', async () => {
    const bed = stopped(await startReloadBed());
    const folder = rulesFolder({ 'heal.ts': startRule('heal') });
    // The test beds leave the type-check out; this test is about it.
    const replica = await bed.start(folder.dir, { role: 'worker', typecheckRules: true });

    folder.write({ 'restart.ts': badField });
    const outcome = await replica.reflex.reload!({ by: 'signal' });
    const expected = `${folder.dir}/restart.ts:6:5: invalid rule "restart": crashLoop.maxRestarts: expected number, received string`;
    expect(outcome).toMatchObject({ result: 'refused', errors: [expected] });
    expect(replica.logs.find((l) => String(l.msg).startsWith('rules reload refused'))?.msg).toContain(expected);
    expect((await bed.reloads()).at(-1)).toMatchObject({ result: 'refused', errors: [expected] });

    folder.write({ 'restart.ts': undefined, 'typed.ts': typeError });
    const typed = await replica.reflex.reload!({ by: 'signal' });
    expect(typed).toMatchObject({ result: 'refused', errors: [`${folder.dir}/typed.ts:4:27: 'instance' is possibly 'undefined'.`] });
    expect(replica.reflex.ruleSet!.current.loaded.rules.map((r) => r.name)).toEqual(['heal']);
  }, 90_000);

  it('a when that throws is logged at warn with the rule, its file:line, the instance and the error, counted, and alerted when it keeps throwing; a clean evaluation resolves the alert', async () => {
    const server = await startRecordingServer();
    stopped({ stop: () => server.close() });
    process.env.RULES_TEST_HOOK_SECRET = testWebhookSecret;
    const bed = stopped(await startReloadBed());
    const folder = rulesFolder({ 'fragile.ts': throwing });
    const bad = ['bad1', 'bad2', 'bad3', 'bad4', 'bad5'];
    for (const name of bad) bed.sim.controls.addInstance({ name, config: { 'user.fail': 'true' } });
    bed.sim.controls.addInstance({ name: 'good', config: {} });
    const replica = await bed.start(folder.dir, {
      notifications: {
        receivers: [{ kind: 'webhook', name: 'hook', url: server.url, secretEnv: 'RULES_TEST_HOOK_SECRET' }],
        route: { receiver: 'hook', groupBy: ['kind', 'instance'], groupWaitMs: 50, groupIntervalMs: 100 },
      },
    });
    await until('the event stream', () => replica.reflex.subscriber?.connected === true, 15_000);
    const ruleAlerts = () => server.requests.flatMap((r) => (r.json as { alerts?: Alert[] }).alerts ?? []).filter((a) => a.kind === 'rule.failing');
    const errorsCounted = async () =>
      Number(/^reflex_rule_errors_total\{rule="fragile"\} (\d+)$/m.exec((await replica.reflex.metrics.scrape()).body)?.[1] ?? 0);
    const warnings = () => replica.logs.filter((l) => l.level === 40 && l.rule === 'fragile');

    bed.sim.controls.crash('bad1');
    await until('a warning about the rule', () => warnings().length === 1, 20_000);
    expect(warnings()[0]).toMatchObject({ rule: 'fragile', at: `${folder.dir}/fragile.ts:2`, instance: 'bad1', err: { message: 'no tier label' } });
    expect(String(warnings()[0]!.msg)).toBe(`rule fragile (${folder.dir}/fragile.ts:2): when threw on bad1: no tier label`);
    expect(await errorsCounted()).toBe(1);
    expect(ruleAlerts()).toEqual([]);

    for (const name of bad.slice(1)) bed.sim.controls.crash(name);
    await until('5 failures counted', async () => (await errorsCounted()) === 5, 20_000);
    await until('the rule.failing alert', () => ruleAlerts().some((a) => a.status === 'firing'), 20_000);
    const firing = ruleAlerts().find((a) => a.status === 'firing')!;
    expect(firing).toMatchObject({ severity: 'warning', instance: 'rule:fragile' });
    expect(firing.summary).toContain(`rule fragile (${folder.dir}/fragile.ts:2) failed 5 times`);

    bed.sim.controls.crash('good');
    await until('good started again', () => bed.sim.controls.statusCode('good') === 103, 20_000);
    await until('the rule.failing alert resolved', () => ruleAlerts().some((a) => a.status === 'resolved'), 20_000);
    expect(await errorsCounted()).toBe(5);
  }, 120_000);
});
