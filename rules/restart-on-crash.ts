import { StatusCode, configFlag, defineRule } from 'reflex-lxd';

/**
 * Starts again an instance that stopped without being asked to (a crash, a guest poweroff: on LXD 5.0
 * the lifecycle event `instance-shutdown` with no requestor) or that reports Error (112).
 * Only instances that opt in with `user.reflex.autorestart=true`, mirroring Incus' `boot.autorestart`.
 * A stop requested through the API (event with a requestor) is never undone. A crash loop is
 * restarted with growing back-off (10 s doubling to 5 min) and quarantined after 5 restarts in
 * 10 minutes, with one alert. On Incus with `boot.autorestart`, the daemon restarts the instance
 * itself: the start is queued after a stand-back (autorestartStandBackMs) and does nothing if the
 * daemon brought it back, so Reflex takes over only once the daemon gives up (docs/rules.md).
 * A stop that happened while every replica was cut off from the event stream is seen only by the
 * resync, with intent `unknown`: nothing tells an operator's stop from a crash then, so this rule
 * does not act on it; Reflex raises one alert ("found Stopped after a gap, cause unknown") and the
 * audit says how to start it by hand (`reflex heal NAME`). A rule that adds `unknown` to its
 * intents opts in to starting such instances, at the risk of undoing an operator's stop (docs/rules.md).
 * A start or launch that failed (a missing init, a broken raw.lxc) is followed by the same stop
 * without requestor, but the instance never ran: Reflex types that stop `failed-start`, which this
 * rule does not act on, so it is not restarted and spends no restart; Reflex audits it and alerts
 * once with the daemon's error and log hint (docs/events.md).
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
  // Rules are code: the back-off can come from the environment (the demo shortens it to 1 s).
  crashLoop: {
    maxRestarts: 5,
    windowMs: 600_000,
    initialBackoffMs: Number(process.env.REFLEX_CRASHLOOP_BACKOFF_MS) || 10_000,
    maxBackoffMs: 300_000,
  },
});
