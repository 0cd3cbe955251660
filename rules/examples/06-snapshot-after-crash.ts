import { StatusCode, defineRule } from 'reflex-lxd';

/**
 * 06 — Two rules handing over with a follow-up event. The first only says what happened
 * (`emit` publishes `instance.crashed`); the second, which could live in another file or team,
 * keeps the evidence: a snapshot of the crashed instance, expiring after three days.
 */
export default [
  defineRule({
    name: 'example-announce-crash',
    on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
    scope: { filter: 'config.user.reflex.keep-crash-evidence eq true' },
    actions: [{ action: 'emit', params: { name: 'instance.crashed' } }],
  }),
  defineRule({
    name: 'example-snapshot-after-crash',
    on: { kind: 'rule.event', name: ['instance.crashed'] },
    actions: [{ action: 'snapshot', params: { name: 'crash-%Y%m%d-%H%M%S', expiry: '3d' } }],
  }),
];
