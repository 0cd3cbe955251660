import { StatusCode, configFlag, defineRule } from 'reflex-lxd';

/**
 * 05 — Quarantine after a crash loop, tightly: restart at once, then after 10 s, 20 s; a fourth
 * crash within 10 minutes quarantines the instance (no more restarts, one alert) for two hours.
 * `reflex quarantine release NAME` lifts it early.
 */
export default defineRule({
  name: 'example-quarantine-after-crash-loop',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  when: ({ instance }) => configFlag(instance, 'user.reflex.crash-loop-guard'),
  whenNot: 'user.reflex.crash-loop-guard is not true',
  actions: [{ action: 'start' }],
  crashLoop: { maxRestarts: 3, windowMs: 600_000, initialBackoffMs: 10_000, maxBackoffMs: 20_000, quarantineMs: 7_200_000 },
});
