import { describe, expect, it } from 'vitest';
import type { InstancePlan } from '../../src/schedules/housekeeping/instance-plan.js';
import { describeStep } from '../../src/schedules/housekeeping/plan-format.js';
import { defineSchedule } from '../../src/schedules/schedule.js';
import { reflexArgs } from '../support/redis.js';
import { reflexInProcess } from '../cli/in-process.js';
import { backupEvery, startScheduleBed } from '../support/schedule-bed.js';
import { writeRules } from '../support/stack.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

describe('reflex housekeeping plan', () => {
  const stopped = stoppedAfterEach();

  it('prints what the next tick then does: the same creations, deletions and kept snapshots, changing nothing', async () => {
    const backup = { 'user.backup': 'true' };
    const bed = stopped(
      await startScheduleBed('hk-plan', { instances: [{ name: 'p1', config: backup }, { name: 'p2', config: backup }, { name: 'p3' }] }),
    );
    const { sim, prefix, target, audit, runner } = bed;
    const def = backupEvery('plan-me', '8s', 'pm-%Y%m%d-%H%M%S', 1);
    const rulesDir = writeRules({
      'schedules.ts': `import { defineSchedule } from 'reflex-lxd';\nexport default defineSchedule(${JSON.stringify(def)});\n`,
    });
    await bed.scheduler([defineSchedule(def)]);

    // One tick made and settled, its snapshot the one kept: the next both creates and deletes.
    const done = async () => new Set((await audit.read({})).filter((r) => r.type === 'outcome' && r.result === 'done').map((r) => r.correlationId));
    const before = await until(
      'a tick done',
      async () => {
        const s = await done();
        return s.size >= 1 && s;
      },
      40_000,
    );
    await until(
      'the jobs idle',
      async () => Object.values(await runner.actions.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).every((n) => n === 0),
      5_000,
    );
    const callsBefore = sim.controls.callCounts();

    // In this process: a plan started as a process of its own took longer than the 8 s to the next
    // tick on a loaded machine, and that tick's calls then counted as the plan's.
    const res = await reflexInProcess(['housekeeping', 'plan', '--json', ...reflexArgs(prefix, target), '--rules', rulesDir]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout) as { schedules: { name: string; tickAt: string; tickFrom: string; plans: InstancePlan[] }[] };
    const [plan] = printed.schedules;
    expect(plan).toMatchObject({ name: 'plan-me', tickFrom: 'scheduler' });
    expect(plan!.plans.map((p) => p.instance)).toEqual(['p1', 'p2']);
    expect(Date.now(), 'the plan answered before the tick it plans (else that tick would be counted as the plan)').toBeLessThan(
      Date.parse(plan!.tickAt),
    );
    expect(sim.controls.callCounts(), 'the plan changed nothing').toEqual(callsBefore);
    expect((await done()).size).toBe(before.size);

    const tickAt = Date.parse(plan!.tickAt);
    const decisions = await until(
      'the planned tick',
      async () => {
        const d = (await audit.read({})).filter((r) => r.type === 'decision' && r.correlationId === `schedule:plan-me:${tickAt}`);
        return d.length === 2 && d;
      },
      20_000,
    );
    for (const p of plan!.plans) {
      const ran = decisions.find((d) => d.instance === p.instance)!.plan as { steps: string[]; keep: string[] };
      expect(p.steps.map((s) => s.kind)).toEqual(['create-snapshot', 'delete-snapshot']);
      expect(ran.steps).toEqual(p.steps.map(describeStep));
      expect(ran.keep).toEqual(p.keep.map((k) => k.name));
    }
  }, 90_000);
});
