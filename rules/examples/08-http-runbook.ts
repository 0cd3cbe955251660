import { StatusCode, defineRule } from 'reflex-lxd';

/**
 * 08 — Call a runbook service when a web instance crashes, after starting it again. The `http`
 * action posts a JSON body filled from the incident, the event and the instance as read when the
 * action runs; the URL and the token are named, not written (`{ env }`, or `{ file }` for a
 * mounted secret), so neither is in the rule, the job or the audit log. A 5xx, a 429 or a timeout
 * is retried by the retry policy; any other answer outside 2xx gives up with one alert.
 */
export default defineRule({
  name: 'example-http-runbook',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  scope: { filter: 'config.user.reflex.runbook eq true' },
  actions: [
    { action: 'start' },
    {
      action: 'http',
      params: {
        url: { env: 'RUNBOOK_URL' },
        headers: { authorization: { env: 'RUNBOOK_TOKEN' } },
        body: {
          runbook: 'instance-crashed',
          instance: '{incident.instance}',
          project: '{incident.project}',
          status: '{instance.status}',
          tier: '{instance.config.user.tier}',
          crashedAt: '{event.timestamp}',
          incident: '{incident.id}',
        },
        timeout: '5s',
      },
    },
  ],
});
