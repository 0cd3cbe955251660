// Until src/index.ts exports them, notification settings import from the notify module directly.
import { defineNotifications } from 'reflex-lxd';
import { notificationTitle } from '../../src/notify/message-text.js';

/**
 * Example notification receivers and routes (docs/notifications.md). Secrets are never written
 * here: each receiver names the environment variable that holds its webhook URL (`urlEnv`) or
 * signing key (`secretEnv`), and Reflex prints them as `[redacted]`.
 *
 * Routing: crash loops and failure storms page on-call (Teams, falling back to the signed webhook when Teams keeps
 * failing); everything also goes to the CloudEvents sink for the event bus; database instances go
 * to the DB team's Mattermost; the rest to Slack, grouped per kind and project.
 */
export default defineNotifications({
  auditUrl: 'https://reflex.example.internal/audit?correlation={correlationId}',
  receivers: [
    {
      kind: 'slack',
      name: 'slack-ops',
      urlEnv: 'REFLEX_SLACK_WEBHOOK_URL',
      username: 'reflex',
      iconEmoji: ':robot_face:',
      rateLimit: { count: 20, windowMs: 60_000 },
    },
    { kind: 'mattermost', name: 'mattermost-db', urlEnv: 'REFLEX_MATTERMOST_WEBHOOK_URL', channel: 'db-oncall' },
    { kind: 'discord', name: 'discord-lab', urlEnv: 'REFLEX_DISCORD_WEBHOOK_URL', username: 'reflex' },
    { kind: 'teams', name: 'teams-oncall', urlEnv: 'REFLEX_TEAMS_WORKFLOW_URL', maxAttempts: 4, backoffMs: 2000, fallback: 'pager-webhook' },
    { kind: 'webhook', name: 'pager-webhook', url: 'https://pager.example.internal/reflex', secretEnv: 'REFLEX_PAGER_HMAC_KEY' },
    { kind: 'cloudevents', name: 'event-bus', url: 'https://events.example.internal/ingest', source: '/reflex/prod' },
    // A template replaces the default payload; here a terse Slack message for the lab.
    { kind: 'slack', name: 'slack-lab', urlEnv: 'REFLEX_SLACK_LAB_WEBHOOK_URL', template: (n) => ({ text: notificationTitle(n) }) },
  ],
  route: {
    receiver: 'slack-ops',
    groupBy: ['kind', 'project'],
    groupWaitMs: 30_000,
    groupIntervalMs: 300_000,
    repeatIntervalMs: 4 * 3_600_000,
    routes: [
      { receiver: 'event-bus', continue: true, groupBy: ['instance'], groupWaitMs: 0 },
      { match: { kind: ['instance.crash-loop', 'member.storm'] }, receiver: 'teams-oncall', groupBy: ['instance'], groupWaitMs: 5_000 },
      { matchRe: { instance: '(db|pg|mysql)-.*' }, receiver: 'mattermost-db' },
      { match: { project: ['lab', 'sandbox'] }, receiver: 'slack-lab', routes: [{ match: { severity: 'critical' }, receiver: 'discord-lab' }] },
      // As in Alertmanager, the root's receiver gets only alerts no child matched; the event-bus
      // route matches them all, so the rest needs an explicit catch-all.
      { receiver: 'slack-ops' },
    ],
  },
});
