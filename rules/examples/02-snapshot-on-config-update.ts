import { defineRule } from 'reflex-lxd';

/**
 * 02 — A restore point for every configuration change. Each `instance-updated` takes a snapshot
 * that expires after a week, so the state before the next change can always be restored. At most
 * one snapshot per instance every five minutes (cooldown), however many updates arrive.
 */
export default defineRule({
  name: 'example-snapshot-on-config-update',
  on: { kind: 'lifecycle', action: ['instance-updated'] },
  scope: { filter: 'config.user.reflex.snapshot-on-update eq true' },
  actions: [{ action: 'snapshot', params: { name: 'before-next-change-%Y%m%d-%H%M%S', expiry: '7d' } }],
  cooldownMs: 5 * 60_000,
});
