import { StatusCode, defineRule } from 'reflex-lxd';

/**
 * 01 — Restart on crash. Starts again any instance of the `web` tier that stopped without being
 * asked to, scoped declaratively with the filter language instead of a predicate.
 */
export default defineRule({
  name: 'example-restart-on-crash',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  scope: { filter: 'config.user.tier eq web' },
  actions: [{ action: 'start' }],
  crashLoop: { maxRestarts: 5 },
});
