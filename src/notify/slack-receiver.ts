import type { Alert } from '../alerts/alert.js';
import { reflexLines, alertPlace, notificationTitle, truncate } from './message-text.js';
import { firingAlerts, resolvedAlerts, type Notification } from './notification.js';
import type { SlackConfig } from './receiver-config.js';

/** Alerts shown as blocks; Slack allows 50 blocks per message and each alert takes two. */
const maxAlertBlocks = 20;

/** Slack mrkdwn treats &, < and > as control characters. */
function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function alertSection(a: Alert): object[] {
  const head = a.status === 'resolved' ? '*RESOLVED*' : `*${a.severity.toUpperCase()}*`;
  const lines = [`${head} ${escapeMrkdwn(alertPlace(a))}: ${escapeMrkdwn(a.summary)}`, ...reflexLines(a).map((l) => `• ${escapeMrkdwn(l)}`)];
  const audit = a.auditUrl
    ? `<${a.auditUrl}|audit trail> (correlation \`${escapeMrkdwn(a.correlationId)}\`)`
    : `audit: correlation \`${escapeMrkdwn(a.correlationId)}\``;
  return [
    { type: 'section', text: { type: 'mrkdwn', text: truncate(lines.join('\n'), 3000) } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: audit }] },
  ];
}

/**
 * The default Slack payload (incoming webhook with Block Kit): `text` is the notification
 * fallback; `blocks` are a header, then per alert a section (what happened, what Reflex did) and
 * a context line linking the audit trail.
 */
export function slackPayload(
  n: Notification,
  cfg?: Pick<SlackConfig, 'channel' | 'username' | 'iconEmoji' | 'titleTemplate'>,
): Record<string, unknown> {
  const alerts = [...firingAlerts(n), ...resolvedAlerts(n)];
  const shown = alerts.slice(0, maxAlertBlocks);
  const blocks: object[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(notificationTitle(n, cfg?.titleTemplate), 150) } },
    ...shown.flatMap(alertSection),
  ];
  if (alerts.length > shown.length)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `and ${alerts.length - shown.length} more` }] });
  return {
    text: notificationTitle(n, cfg?.titleTemplate),
    blocks,
    ...(cfg?.channel ? { channel: cfg.channel } : {}),
    ...(cfg?.username ? { username: cfg.username } : {}),
    ...(cfg?.iconEmoji ? { icon_emoji: cfg.iconEmoji } : {}),
  };
}
