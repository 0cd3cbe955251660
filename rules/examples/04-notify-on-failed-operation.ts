import { StatusCode, defineRule } from 'reflex-lxd';

/**
 * 04 — Notify on failed operations. Any background operation on an instance that ends in Failure
 * (400), e.g. a start refused because the instance is busy, a snapshot that could not be taken, a
 * stop that timed out, raises a warning through the notification receivers.
 */
export default defineRule({
  name: 'example-notify-on-failed-operation',
  on: { kind: 'operation.status', to: [StatusCode.Failure] },
  actions: [{ action: 'notify', params: { severity: 'warning', kind: 'operation.failed', summary: 'an operation on this instance failed' } }],
  cooldownMs: 60_000,
});
