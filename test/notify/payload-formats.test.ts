import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceiverConfigInput } from '../../src/notify/receiver-config.js';
import { Webhook } from 'standardwebhooks';
import { crashAlert, fastTimings, NotifierFixture, testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

const kinds = ['slack', 'mattermost', 'discord', 'teams', 'webhook', 'cloudevents'] as const;
const title = '[FIRING:1] instance.crashed: web-1';
const summary = 'web-1 stopped without a request (status 102 Stopped)';
const auditUrl = 'https://reflex.example/audit?correlation=evt-web-1';
const ran = 'Reflex ran start: done, started (was Stopped) [operation op-web-1]';

describe('each receiver gets its service’s documented payload', () => {
  const fx = new NotifierFixture();
  const servers = {} as Record<(typeof kinds)[number] | 'custom', RecordingServer>;

  beforeAll(async () => {
    for (const k of [...kinds, 'custom'] as const) servers[k] = await startRecordingServer();
    const env = { SLACK_URL: servers.slack.url, HOOK_SECRET: testWebhookSecret };
    const receivers: ReceiverConfigInput[] = [
      { kind: 'slack', name: 'slack', urlEnv: 'SLACK_URL', username: 'reflex', iconEmoji: ':robot_face:' },
      { kind: 'mattermost', name: 'mattermost', url: servers.mattermost.url, channel: 'ops' },
      { kind: 'discord', name: 'discord', url: servers.discord.url, username: 'reflex' },
      { kind: 'teams', name: 'teams', url: servers.teams.url },
      { kind: 'webhook', name: 'webhook', url: servers.webhook.url, secretEnv: 'HOOK_SECRET' },
      { kind: 'cloudevents', name: 'cloudevents', url: servers.cloudevents.url, source: '/reflex/test' },
      {
        kind: 'webhook',
        name: 'custom',
        url: servers.custom.url,
        secretEnv: 'HOOK_SECRET',
        template: (n) => ({ text: `${n.alerts.length} alert(s) for ${n.groupLabels.kind}` }),
      },
    ];
    const notifier = fx.replica({
      receivers,
      env,
      auditUrl: 'https://reflex.example/audit?correlation={correlationId}',
      route: {
        receiver: 'slack',
        ...fastTimings,
        routes: [...kinds.slice(1), 'custom'].map((r) => ({ receiver: r, continue: true })).concat([{ receiver: 'slack', continue: true }]),
      },
    });
    await notifier.notify(crashAlert('web-1'));
    await until('one request per receiver', () => Object.values(servers).every((s) => s.requests.length === 1));
  });

  afterAll(async () => {
    await fx.close();
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });

  it('posts JSON to every receiver', () => {
    for (const s of Object.values(servers)) {
      expect(s.requests[0]!.method).toBe('POST');
      expect(s.requests[0]!.headers['content-type']).toMatch(/json/);
    }
  });

  it('Slack: incoming webhook with fallback text and Block Kit blocks', () => {
    expect(servers.slack.requests[0]!.json).toEqual({
      text: title,
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: title } },
        {
          type: 'section',
          text: { type: 'mrkdwn', text: `*CRITICAL* web-1 (project default on local): ${summary}\n• ${ran}\n• Outcome: restarted` },
        },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `<${auditUrl}|audit trail> (correlation \`evt-web-1\`)` }] },
      ],
      username: 'reflex',
      icon_emoji: ':robot_face:',
    });
  });

  it('Mattermost: Markdown text and channel override', () => {
    expect(servers.mattermost.requests[0]!.json).toEqual({
      text: `#### ${title}\n\n**CRITICAL** web-1 (project default on local): ${summary}\n- ${ran}\n- Outcome: restarted\n- [audit trail](${auditUrl}) (correlation \`evt-web-1\`)`,
      channel: 'ops',
    });
  });

  it('Discord: content, one embed per alert, no mentions', () => {
    expect(servers.discord.requests[0]!.json).toEqual({
      content: title,
      embeds: [
        {
          title: 'CRITICAL instance.crashed: web-1',
          description: `${summary}\n\n${ran}\nOutcome: restarted`,
          color: 0xd92d20,
          fields: [
            { name: 'Project', value: 'default', inline: true },
            { name: 'Target', value: 'local', inline: true },
            { name: 'Audit', value: `${auditUrl} (correlation id evt-web-1)`, inline: false },
          ],
          timestamp: '2025-01-02T03:04:05.000Z',
          url: auditUrl,
        },
      ],
      allowed_mentions: { parse: [] },
      username: 'reflex',
    });
  });

  it('Teams: a message with one Adaptive Card attachment', () => {
    expect(servers.teams.requests[0]!.json).toEqual({
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          contentUrl: null,
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.4',
            body: [
              { type: 'TextBlock', text: title, wrap: true, size: 'Medium', weight: 'Bolder' },
              { type: 'TextBlock', text: `CRITICAL web-1: ${summary}`, wrap: true, weight: 'Bolder', color: 'Attention', separator: true },
              {
                type: 'FactSet',
                facts: [
                  { title: 'Kind', value: 'instance.crashed' },
                  { title: 'Project', value: 'default' },
                  { title: 'Target', value: 'local' },
                  { title: 'Reflex', value: `${ran}; Outcome: restarted` },
                  { title: 'Audit', value: `${auditUrl} (correlation id evt-web-1)` },
                ],
              },
            ],
            actions: [{ type: 'Action.OpenUrl', title: 'Audit trail: web-1', url: auditUrl }],
          },
        },
      ],
    });
  });

  it('generic webhook: versioned document with the alerts, signed over timestamp and body', () => {
    const req = servers.webhook.requests[0]!;
    const body = req.json as Record<string, unknown>;
    expect(body).toEqual({
      version: '1',
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      receiver: 'webhook',
      status: 'firing',
      groupKey: expect.any(String),
      groupLabels: { kind: 'instance.crashed', project: 'default' },
      repeat: false,
      alerts: [
        {
          fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/),
          status: 'firing',
          severity: 'critical',
          kind: 'instance.crashed',
          target: 'local',
          project: 'default',
          instance: 'web-1',
          summary,
          actions: [{ action: 'start', result: 'done', summary: 'started (was Stopped)', operationId: 'op-web-1' }],
          outcome: 'restarted',
          correlationId: 'evt-web-1',
          auditUrl,
          labels: {},
          startsAt: '2025-01-02T03:04:05.000Z',
        },
      ],
    });
    expect(req.headers['webhook-id']).toBe(body.id);
    expect(new Webhook(testWebhookSecret).verify(req.raw, req.headers as Record<string, string>)).toEqual(body);
  });

  it('CloudEvents: one event in structured mode', () => {
    const req = servers.cloudevents.requests[0]!;
    expect(req.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    const event = req.json as Record<string, unknown>;
    expect(Object.keys(event).sort()).toEqual(['data', 'datacontenttype', 'id', 'source', 'specversion', 'subject', 'time', 'type']);
    expect(event).toMatchObject({ specversion: '1.0', source: '/reflex/test', type: 'dev.reflex.alert.firing', datacontenttype: 'application/json' });
    expect(new Date(event.time as string).toISOString()).toBe(event.time);
    expect(event.data).toMatchObject({
      version: '1',
      receiver: 'cloudevents',
      status: 'firing',
      alerts: [expect.objectContaining({ instance: 'web-1', correlationId: 'evt-web-1' })],
    });
    expect(event.id).toBe((event.data as { id: string }).id);
  });

  it('a receiver’s template replaces the default payload', () => {
    expect(servers.custom.requests[0]!.json).toEqual({ text: '1 alert(s) for instance.crashed' });
  });
});
