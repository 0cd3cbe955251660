import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineProbe, probesOfConfig } from '../../src/probes/probe.js';
import { applyOutcome, freshState, type ProbeOutcome, type ProbeState } from '../../src/probes/probe-state.js';
import { loadRuleSet } from '../../src/rules/rule-set.js';
import { checkRules } from '../../src/rules/rule-checker.js';
import { writeRules } from '../support/stack.js';

/** Applies outcomes in turn (one per period), answering each transition as `at:from→to`. */
function run(outcomes: ProbeOutcome[], t = { failureThreshold: 3, successThreshold: 2 }, from?: ProbeState) {
  let state = from ?? freshState('2026-01-01T00:00:00Z', 'f');
  const transitions: string[] = [];
  outcomes.forEach((o, i) => {
    const r = applyOutcome(state, o, i, t);
    state = r.state;
    if (r.transition) transitions.push(`${i}:${r.transition.from}→${r.transition.to}`);
  });
  return { state, transitions };
}

const s = 'success' as const;
const f = 'failure' as const;
const u = 'unknown' as const;

describe('probe thresholds (Kubernetes semantics)', () => {
  it('one success concludes healthy without a transition; failureThreshold failures in a row make it unhealthy once', () => {
    const { state, transitions } = run([s, f, f, f, f, f]);
    expect(transitions).toEqual(['3:healthy→unhealthy']);
    expect(state).toMatchObject({ health: 'unhealthy', failures: 5, seq: 1, streakSince: 1 });
  });

  it('a success between failures breaks the streak', () => {
    expect(run([s, f, f, s, f, f]).transitions).toEqual([]);
    expect(run([s, f, f, s, f, f, f]).transitions).toEqual(['6:healthy→unhealthy']);
  });

  it('an unhealthy instance needs successThreshold successes in a row to be healthy again', () => {
    const { transitions, state } = run([f, f, f, s, f, s, s]);
    expect(transitions).toEqual(['2:unknown→unhealthy', '6:unhealthy→healthy']);
    expect(state).toMatchObject({ health: 'healthy', seq: 2, successes: 2, streakSince: 5 });
  });

  it('a check that could not run (unknown) neither fails nor breaks a streak', () => {
    expect(run([s, f, u, u, f, u, f]).transitions).toEqual(['6:healthy→unhealthy']);
    expect(run([u, u, u, u, u]).state).toMatchObject({ health: 'unknown', failures: 0, successes: 0 });
  });
});

describe('a probe definition', () => {
  it('takes Kubernetes defaults and runs a command string through sh -c', () => {
    const p = defineProbe({ name: 'web', kind: 'exec', command: 'test -f /run/ok' });
    expect(p).toMatchObject({
      command: ['sh', '-c', 'test -f /run/ok'],
      periodMs: 10_000,
      timeoutMs: 1000,
      failureThreshold: 3,
      successThreshold: 1,
      initialDelayMs: 0,
    });
  });

  it.each([
    [{ name: 'x', kind: 'exec' }, /command: an exec probe needs a command/],
    [{ name: 'x', kind: 'tcp' }, /port: a tcp probe needs a port/],
    [{ name: 'x', kind: 'http', command: 'true' }, /command: only exec probes/],
    [{ name: 'x', kind: 'exec', command: 'true', periodMs: 10 }, /periodMs: Too small/],
    [{ name: 'x', kind: 'exec', command: 'true', failureTreshold: 3 }, /unrecognized key.*failureTreshold|failureTreshold/],
    [{ name: 'X y', kind: 'exec', command: 'true' }, /name: use lowercase/],
    [{ name: 'x', kind: 'exec', command: 'true', scope: { filter: 'name eq' } }, /scope\.filter/],
  ])('refuses %j, naming the field', (def, message) => {
    expect(() => defineProbe(def as never)).toThrow(message);
  });

  it("an instance's user.reflex.probe.* keys define a probe of their own and override the folder's thresholds", () => {
    const folder = defineProbe({ name: 'web', kind: 'http', url: '/healthz', port: 8080 });
    const { probes, problems } = probesOfConfig(
      { 'user.reflex.probe.exec': 'test -f /run/ok', 'user.reflex.probe.period': '2s', 'user.reflex.probe.failure-threshold': '5' },
      [folder],
    );
    expect(problems).toEqual([]);
    expect(probes.map((p) => [p.name, p.check, p.periodMs, p.failureThreshold])).toEqual([
      ['web', 'http', 2000, 5],
      ['config', 'exec', 2000, 5],
    ]);
    expect(probes[1]!.command).toEqual(['sh', '-c', 'test -f /run/ok']);
  });

  it('user.reflex.probe=off turns every probe off for the instance; keys it cannot read are reported, not guessed', () => {
    const folder = defineProbe({ name: 'web', kind: 'exec', command: 'true' });
    expect(probesOfConfig({ 'user.reflex.probe': 'off', 'user.reflex.probe.exec': 'true' }, [folder]).probes).toEqual([]);
    const bad = probesOfConfig({ 'user.reflex.probe.period': 'often', 'user.reflex.probe.failure-threshold': '0' }, [folder]);
    expect(bad.probes).toEqual([folder]);
    expect(bad.problems).toEqual([
      'user.reflex.probe.period: "often" is not a duration from 250 ms to 1 h',
      'user.reflex.probe.failure-threshold: "0" is not a whole number from 1 to 1000',
    ]);
  });
});

describe('probe files in the rules folder', () => {
  it('a folder of rules and probes loads both; the bundled example catalogue has its probe', async () => {
    const set = await loadRuleSet({ dir: resolve('rules/examples') });
    expect(set.errors).toEqual([]);
    expect(set.loaded.probes.map((p) => p.name)).toEqual(['example-web-health']);
    expect(set.loaded.rules.map((r) => r.name)).toContain('example-heal-unhealthy-service');
  });

  it('a bad probe file is reported at its file and line, and the other files still load', async () => {
    const dir = writeRules({
      'good.ts': `import { defineProbe } from 'reflex-lxd';\nexport default defineProbe({ name: 'good', kind: 'tcp', port: 22 });\n`,
      'bad.ts': `import { defineProbe } from 'reflex-lxd';\n\nexport default defineProbe({\n  name: 'bad',\n  kind: 'exec',\n});\n`,
    });
    const set = await loadRuleSet({ dir });
    expect(set.loaded.probes.map((p) => p.name)).toEqual(['good']);
    expect(set.errors).toHaveLength(1);
    expect(set.errors[0]).toMatchObject({ file: resolve(dir, 'bad.ts'), line: 3 });
    expect(set.errors[0]!.message).toMatch(/invalid probe "bad": command: an exec probe needs a command/);
  });

  it('reflex rules check type-checks probe files: a misspelt field is located', async () => {
    const dir = writeRules({
      'p.ts': `import { defineProbe } from 'reflex-lxd';\nexport default defineProbe({ name: 'p', kind: 'exec', command: 'true', periodSeconds: 10 });\n`,
    });
    const { problems } = await checkRules(dir);
    expect(problems[0]).toMatchObject({ file: resolve(dir, 'p.ts'), line: 2 });
    expect(problems[0]!.message).toMatch(/periodSeconds/);
  }, 60_000);

  it('two probes of one name are refused', async () => {
    const probe = `defineProbe({ name: 'twice', kind: 'tcp', port: 22 })`;
    const dir = writeRules({ 'a.ts': `import { defineProbe } from 'reflex-lxd';\nexport default [${probe}, ${probe}];\n` });
    const set = await loadRuleSet({ dir });
    expect(set.errors.map((e) => e.message)).toEqual(['probe name "twice" is used twice in the rules folder']);
  });
});
