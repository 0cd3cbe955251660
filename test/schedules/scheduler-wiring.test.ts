import { describe, expect, it } from 'vitest';
import { startReflexBed } from '../actions/reflex-bed.js';
import { until } from '../support/wait.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';

const schedule = `import { defineSchedule } from 'reflex-lxd';
export default defineSchedule({
  name: 'every-second',
  every: '1s',
  catchUp: 'skip',
  scope: { filter: 'config.user.backup eq true' },
  tasks: [{ task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M%S' }, { task: 'retention', keepLast: 2 }],
});
`;

describe('reflex run wires housekeeping to its metrics', () => {
  const stopped = stoppedAfterEach();

  it('counts ticks and snapshots made on /metrics, and gauges the newest snapshot age, in a running process', async () => {
    const bed = stopped(await startReflexBed({ 'schedules.ts': schedule }));
    bed.sim.controls.addInstance({ name: 'db1', config: { 'user.backup': 'true' } });
    const metric = async (re: RegExp) => Number(re.exec((await bed.reflex.metrics.scrape()).body)?.[1] ?? 0);
    await until(
      'two ticks ran',
      async () => (await metric(/^reflex_housekeeping_ticks_total\{schedule="every-second",result="ran"\} (\d+)/m)) >= 3,
      20_000,
    );
    await until(
      'a snapshot counted as made',
      async () => (await metric(/^reflex_housekeeping_snapshots_total\{schedule="every-second",result="made"\} (\d+)/m)) >= 1,
      20_000,
    );
    expect((await bed.reflex.metrics.scrape()).body).toMatch(
      /^reflex_housekeeping_newest_snapshot_age_seconds\{schedule="every-second",project="default",instance="db1"\} \d/m,
    );
  }, 60_000);
});
