import { describe, expect, it } from 'vitest';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { until } from '../support/wait.js';
import { rulesFolder, startReloadBed, startRule, tickSchedule, type ReloadBed } from './support/reload-bed.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';

/** The rules whose actions were queued for an instance (audit `action` records). */
async function actingRules(bed: ReloadBed, instance: string, crashes: number): Promise<string[]> {
  const trail = await waitForAudit(
    redisUrl(),
    bed.prefix,
    instance,
    (rs) => rs.filter((r) => r.type === 'outcome' && r.result === 'done').length >= crashes,
  );
  return trail.filter((r) => r.type === 'action').map((r) => r.rule!);
}

async function crashAndHeal(bed: ReloadBed, name: string): Promise<void> {
  bed.sim.controls.crash(name);
  await until(`${name} running again`, () => bed.sim.controls.statusCode(name) === 103, 20_000);
}

describe('reloading rules without a restart', () => {
  const stopped = stoppedAfterEach();
  /** A bed whose Reflex runs rule heal-v1 from a fresh folder, with instance web1 and the event stream connected. */
  const healingWeb1 = async () => {
    const bed = stopped(await startReloadBed());
    const folder = rulesFolder({ 'heal.ts': startRule('heal-v1') });
    const { reflex, logs } = await bed.start(folder.dir);
    bed.sim.controls.addInstance({ name: 'web1' });
    await until('the stream', () => reflex.subscriber?.connected === true, 15_000);
    return { bed, folder, reflex, logs };
  };

  it('a changed rule acts on the next crash after a reload and the old one does not; the reload is audited and logged', async () => {
    const { bed, folder, reflex, logs } = await healingWeb1();
    await crashAndHeal(bed, 'web1');
    expect(await actingRules(bed, 'web1', 1)).toEqual(['heal-v1']);

    folder.write({ 'heal.ts': startRule('heal-v2') });
    const outcome = await reflex.reload!({ by: 'signal' });
    expect(outcome).toMatchObject({ result: 'reloaded', rules: 1, schedules: 0, receivers: 0 });
    expect(reflex.ruleSet!.current.generation).toBe(2);

    await crashAndHeal(bed, 'web1');
    expect(await actingRules(bed, 'web1', 2)).toEqual(['heal-v1', 'heal-v2']);

    const [record] = await bed.reloads();
    expect(record).toMatchObject({
      result: 'reloaded',
      by: 'signal',
      before: { rules: 1 },
      after: { rules: 1 },
      changes: { rules: { added: ['heal-v2'], removed: ['heal-v1'] } },
    });
    expect(record!.summary).toContain('+rule heal-v2, -rule heal-v1');
    expect(logs.find((l) => String(l.msg).startsWith('rules reloaded'))).toMatchObject({ level: 30 });
  }, 90_000);

  it('a folder with a syntax error in one file is refused whole: the old rules keep acting, and the audit and log say why with file:line', async () => {
    const { bed, folder, reflex, logs } = await healingWeb1();

    // The good file changes too: a partial reload would take heal-v2 and skip broken.ts.
    folder.write({
      'heal.ts': startRule('heal-v2'),
      'broken.ts': `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'x', on: [ });\n`,
    });
    const outcome = await reflex.reload!({ by: 'signal' });
    expect(outcome.result).toBe('refused');
    if (outcome.result !== 'refused') return;
    expect(outcome.errors).toHaveLength(1);
    expect(outcome.errors[0]).toMatch(new RegExp(`${folder.dir}/broken\\.ts:2:\\d+: `));
    expect(reflex.ruleSet!.current.generation).toBe(1);

    await crashAndHeal(bed, 'web1');
    expect(await actingRules(bed, 'web1', 1)).toEqual(['heal-v1']);

    const [record] = await bed.reloads();
    expect(record).toMatchObject({ result: 'refused', by: 'signal', before: { rules: 1 } });
    expect(record!.summary).toMatch(/^rules reload refused \(signal\); the previous rule set keeps running: 1 problem\(s\) in .*broken\.ts:2:\d+: /);
    expect((record as unknown as { errors: string[] }).errors).toEqual(outcome.errors);
    const logged = logs.find((l) => String(l.msg).startsWith('rules reload refused'));
    expect(logged).toMatchObject({ level: 50 });
    expect(String(logged!.msg)).toContain('broken.ts:2:');
  }, 90_000);

  it('an emptied folder is refused while rules are running', async () => {
    const bed = stopped(await startReloadBed());
    const folder = rulesFolder({ 'heal.ts': startRule('heal-v1') });
    const { reflex } = await bed.start(folder.dir);
    folder.write({ 'heal.ts': undefined });
    const outcome = await reflex.reload!({ by: 'signal' });
    expect(outcome).toMatchObject({ result: 'refused' });
    expect(outcome.summary).toMatch(/holds no rule and no schedule now/);
    expect(reflex.ruleSet!.current.loaded.rules.map((r) => r.name)).toEqual(['heal-v1']);
  }, 60_000);

  it('a removed schedule stops ticking and an added one ticks', async () => {
    const bed = stopped(await startReloadBed());
    const folder = rulesFolder({ 'heal.ts': startRule('heal-v1'), 'tick.ts': tickSchedule('tick-a') });
    const { reflex } = await bed.start(folder.dir);
    const ticks = async (schedule: string) =>
      Number(
        new RegExp(`^reflex_housekeeping_ticks_total\\{schedule="${schedule}",result="ran"\\} (\\d+)`, 'm').exec(
          (await reflex.metrics.scrape()).body,
        )?.[1] ?? 0,
      );
    await until('tick-a ticks', async () => (await ticks('tick-a')) >= 2, 20_000);

    folder.write({ 'tick.ts': tickSchedule('tick-b') });
    const outcome = await reflex.reload!({ by: 'signal' });
    expect(outcome).toMatchObject({ result: 'reloaded', schedules: 1, changes: { schedules: { added: ['tick-b'], removed: ['tick-a'] } } });
    await until('tick-b ticks', async () => (await ticks('tick-b')) >= 2, 20_000);
    // A tick of tick-a already taken when the reload came may still finish: count from here.
    const a = await ticks('tick-a');
    const b = await ticks('tick-b');
    // Two more ticks of tick-b, on the same interval as tick-a had: a tick of the removed schedule would show among them.
    await until('two more ticks of tick-b', async () => (await ticks('tick-b')) >= b + 2, 20_000);
    expect(await ticks('tick-a')).toBe(a);
  }, 90_000);

  it('an event processed while a reload swaps the rules sees one set: all of its decisions come from the old rules', async () => {
    const bed = stopped(await startReloadBed());
    const g = globalThis as { reloadGate?: Promise<void> };
    let open: () => void = () => undefined;
    g.reloadGate = new Promise<void>((r) => (open = r));
    // a-v1's `when` holds the event until the test lets it go, after the reload has swapped.
    const held = `, when: async () => { await (globalThis as { reloadGate?: Promise<void> }).reloadGate; return true; }`;
    const never = `, when: () => false, whenNot: 'never'`;
    const folder = rulesFolder({ 'a.ts': startRule('a-v1', held), 'b.ts': startRule('b-v1', never) });
    const { reflex } = await bed.start(folder.dir, { ruleTimeoutMs: 60_000 });
    bed.sim.controls.addInstance({ name: 'web1' });
    await until('the stream', () => reflex.subscriber?.connected === true, 15_000);

    bed.sim.controls.crash('web1');
    await until(
      'the crash is being decided',
      async () => (await bed.audit.read({ instance: 'web1' })).some((r) => r.type === 'event' && / → 102 /.test(r.summary)),
      20_000,
    );
    folder.write({ 'a.ts': startRule('a-v2'), 'b.ts': startRule('b-v2', never) });
    expect((await reflex.reload!({ by: 'signal' })).result).toBe('reloaded');
    open();

    const trail = await waitForAudit(redisUrl(), bed.prefix, 'web1', (rs) => rs.some((r) => r.type === 'outcome'));
    const decided = trail
      .filter((r) => r.type === 'decision')
      .map((r) => r.rule)
      .sort();
    expect(decided).toEqual(['a-v1', 'b-v1']);
    // The queued start was re-checked against the rules in force when it ran: a-v1 is gone, so it is skipped.
    expect(trail.find((r) => r.type === 'outcome')).toMatchObject({ result: 'skipped', rule: 'a-v1' });
    expect(trail.find((r) => r.type === 'outcome')!.summary).toMatch(/rule a-v1 is not loaded any more/);
    delete g.reloadGate;
  }, 90_000);
});
