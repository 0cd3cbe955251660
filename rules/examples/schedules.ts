import { defineSchedule } from 'reflex-lxd';

/**
 * Example schedules. Copy one into rules/ (files directly in rules/ are loaded; examples/ is not)
 * and adapt its filter. Each tick runs once across all replicas; every creation and deletion is
 * audited with the plan that led to it (`reflex audit --rule <name>`). Start with `dryRun: true`
 * to see the plans in the log before anything changes.
 */
export default [
  /**
   * Hourly snapshots of instances that opted in with `lxc config set NAME user.backup=true`,
   * kept GFS-style: the last 24 hours, 7 days, 4 weeks and 6 months. Deletions run before the new
   * snapshot when the pool has less than 10% free, after it otherwise. Manual snapshots (any name
   * the pattern does not produce) are never touched.
   */
  defineSchedule({
    name: 'hourly-backup',
    cron: '0 * * * *',
    tz: 'Europe/Paris',
    catchUp: 'one',
    scope: { filter: 'config.user.backup eq true' },
    tasks: [
      { task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M' },
      { task: 'retention', gfs: { hourly: 24, daily: 7, weekly: 4, monthly: 6 }, pruneFirstBelow: 0.1 },
    ],
  }),

  /**
   * Every 15 minutes, a short-lived snapshot of the `web` project's instances: the daemon deletes
   * each after 6 hours; retention keeps at most 12 in any case.
   */
  defineSchedule({
    name: 'web-quarter-hourly',
    every: '15m',
    catchUp: 'skip',
    scope: { projects: ['web'] },
    tasks: [
      { task: 'snapshot', namePattern: 'q-%Y%m%d-%H%M', expiry: '6h' },
      { task: 'retention', keepLast: 12 },
    ],
  }),

  /** Once a night, delete snapshots whose expiry passed but which the daemon left behind. */
  defineSchedule({
    name: 'prune-expired-snapshots',
    cron: '30 3 * * *',
    tasks: [{ task: 'prune-expired' }],
  }),

  /**
   * CI leftovers: stopped instances named `ci-…` that have not run for two days are deleted.
   * `confirm: true` is required; without a filter the schedule is refused.
   */
  defineSchedule({
    name: 'ci-cleanup',
    every: '1h',
    scope: { filter: 'name eq ci-.*' },
    tasks: [{ task: 'delete-stopped', olderThan: '2d', confirm: true }],
    dryRun: true,
  }),
];
