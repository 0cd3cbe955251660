import { defineProbe, defineRule } from 'reflex-lxd';

/**
 * 11 — Heal the hung service, not only the dead container. The probe runs `curl -fsS localhost`
 * inside each instance with `user.role=web` every 10 s (through the daemon's exec API: the
 * instance needs no network); three failures in a row make it `unhealthy` (an `instance.health`
 * event), one success healthy again. The first rule restarts nginx with the probe's own
 * `restartCommand`; when that fails (an exit code other than 0, or no answer in 60 s), its
 * `onFailure` branch force-restarts the instance. Every probe-driven remediation spends the
 * crash-loop budget: more than 3 within 10 minutes quarantines the instance, with one alert.
 * Silences, storm control and an operator's stop apply as to crashes: a stopped or silenced
 * instance is not probed at all (docs/probes.md).
 */
export const webProbe = defineProbe({
  name: 'example-web-health',
  scope: { filter: 'config.user.role eq web' },
  kind: 'exec',
  command: 'curl -fsS -o /dev/null http://127.0.0.1/',
  periodMs: 10_000,
  timeoutMs: 2_000,
  failureThreshold: 3,
  successThreshold: 1,
  initialDelayMs: 30_000,
  restartCommand: 'systemctl restart nginx',
});

export default [
  webProbe,
  defineRule({
    name: 'example-heal-unhealthy-service',
    description: 'Restart the service a health probe found unhealthy; restart the instance if that fails',
    on: { kind: 'instance.health', health: ['unhealthy'], probe: ['example-web-health'] },
    crashLoop: { maxRestarts: 3, windowMs: 600_000, initialBackoffMs: 0 },
    actions: [
      {
        action: 'exec',
        params: { command: webProbe.restartCommand!, timeout: '60s' },
        onFailure: [{ action: 'restart', params: { force: true } }],
      },
    ],
  }),
  defineRule({
    name: 'example-notify-unhealthy',
    description: 'Tell the on-call that a probe found an instance unhealthy',
    on: { kind: 'instance.health', health: ['unhealthy'] },
    actions: [{ action: 'notify', params: { severity: 'warning', summary: 'health probe failing' } }],
  }),
];
