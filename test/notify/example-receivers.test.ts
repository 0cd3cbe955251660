import { describe, expect, it } from 'vitest';
import examples from '../../rules/examples/receivers.js';
import { toAlert } from '../../src/alerts/alert.js';
import { createReceiver } from '../../src/notify/receiver.js';
import { Router } from '../../src/notify/router.js';
import { crashAlert, testWebhookSecret } from './notifier-fixture.js';

describe('the example receivers', () => {
  const env = Object.fromEntries([
    ...examples.receivers.flatMap((r) => ('urlEnv' in r && r.urlEnv ? [[r.urlEnv, `https://hooks.example/${r.urlEnv}`]] : [])),
    ...examples.receivers.flatMap((r) => (r.kind === 'webhook' ? [r.secretEnv ?? []].flat() : [])).map((v) => [v, testWebhookSecret]),
  ]);

  it('are valid and their routes name configured receivers', () => {
    const receivers = examples.receivers.map((r) => createReceiver(r, env));
    const router = new Router(examples.route, new Set(receivers.map((r) => r.name)));
    const to = (input: Parameters<typeof crashAlert>[1], instance = 'web-1') =>
      router.match(toAlert(crashAlert(instance, input))).map((r) => r.receiver);
    expect(to({})).toEqual(['event-bus', 'slack-ops']);
    expect(to({}, 'db-1')).toEqual(['event-bus', 'mattermost-db']);
    expect(to({ kind: 'instance.crash-loop' }, 'db-1')).toEqual(['event-bus', 'teams-oncall']);
    expect(to({ kind: 'member.storm' })).toEqual(['event-bus', 'teams-oncall']);
    expect(to({ project: 'lab', severity: 'critical' })).toEqual(['event-bus', 'discord-lab']);
    expect(to({ project: 'lab', severity: 'warning' })).toEqual(['event-bus', 'slack-lab']);
  });
});
