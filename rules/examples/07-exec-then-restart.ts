import { StatusCode, defineRule } from 'reflex-lxd';

/**
 * 07 — A guest that rebooted by itself (`instance-restarted` with no requestor) may come back
 * without its service: restart the service inside it with the `exec` action, and if that fails
 * (an exit code other than 0, or no answer within the timeout: the command is then killed),
 * force-restart the instance through the action's `onFailure` branch. The exit code, the first
 * 8 KiB of stdout and stderr and the duration are in the audit log either way. A failed command
 * is not retried blindly; the branch runs instead of a give-up, once per incident. Reflex's own
 * exec and restart trigger no rule, this one included.
 */
export default defineRule({
  name: 'example-exec-then-restart',
  on: { kind: 'instance.status', to: [StatusCode.Running], intent: ['unrequested'], action: ['instance-restarted'] },
  scope: { filter: 'config.user.reflex.service-check eq true' },
  cooldownMs: 600_000,
  actions: [
    {
      action: 'exec',
      params: { command: ['sh', '-c', 'systemctl restart nginx'], timeout: '60s' },
      onFailure: [{ action: 'restart', params: { force: true } }],
    },
  ],
});
