import { StatusCode, configFlag, defineRule } from 'reflex';

/**
 * Starts again an instance that stopped without being asked to (a crash, a guest poweroff: on LXD 5.0
 * the lifecycle event `instance-shutdown` with no requestor) or that reports Error (112).
 * Only instances that opt in with `user.reflex.autorestart=true`, mirroring Incus' `boot.autorestart`.
 * A stop requested through the API (event with a requestor) is never undone.
 */
export default defineRule({
  name: 'restart-on-crash',
  description: 'Start again opted-in instances that crashed or report Error',
  on: [
    { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
    { kind: 'instance.status', to: [StatusCode.Error] },
  ],
  when: ({ instance }) => configFlag(instance, 'user.reflex.autorestart'),
  whenNot: 'instance has not opted in (user.reflex.autorestart is not true)',
  actions: [{ action: 'start' }],
});
