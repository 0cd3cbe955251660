import { StatusCode, defineRule } from 'reflex-lxd';

/**
 * 12 — Restart with an operator's approval. A crashed instance of the `db` tier is started again
 * only when an operator says so: the alert `action.approval-requested` carries a signed link to the
 * console and the `reflex approve|deny ID` commands; nobody deciding within 15 minutes means nothing
 * is done, with an alert. An approved start is re-checked at the moment of acting like any other
 * (an operator's own start or stop meanwhile wins). docs/approvals.md.
 */
export default defineRule({
  name: 'example-restart-with-approval',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  scope: { filter: 'config.user.tier eq db' },
  actions: [{ action: 'start' }],
  approval: { role: 'operator', timeout: '15m' },
});
