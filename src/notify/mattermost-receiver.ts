import type { Alert } from '../alerts/alert.js';
import { reflexLines, alertPlace, notificationTitle, truncate } from './message-text.js';
import { firingAlerts, resolvedAlerts, type Notification } from './notification.js';
import type { MattermostConfig } from './receiver-config.js';

/** Mattermost's default maximum post size, in characters. */
const maxPostLength = 16383;

function alertMarkdown(a: Alert): string {
  const head = a.status === 'resolved' ? '**RESOLVED**' : `**${a.severity.toUpperCase()}**`;
  const audit = a.auditUrl ? `[audit trail](${a.auditUrl}) (correlation \`${a.correlationId}\`)` : `audit: correlation \`${a.correlationId}\``;
  return [`${head} ${alertPlace(a)}: ${a.summary}`, ...reflexLines(a).map((l) => `- ${l}`), `- ${audit}`].join('\n');
}

/**
 * The default Mattermost payload (incoming webhook): Markdown `text` with a heading and one
 * paragraph per alert; `channel`, `username` and `icon_url` override the webhook's defaults.
 */
export function mattermostPayload(
  n: Notification,
  cfg?: Pick<MattermostConfig, 'channel' | 'username' | 'iconUrl' | 'titleTemplate'>,
): Record<string, unknown> {
  const alerts = [...firingAlerts(n), ...resolvedAlerts(n)];
  const text = [`#### ${notificationTitle(n, cfg?.titleTemplate)}`, ...alerts.map(alertMarkdown)].join('\n\n');
  return {
    text: truncate(text, maxPostLength),
    ...(cfg?.channel ? { channel: cfg.channel } : {}),
    ...(cfg?.username ? { username: cfg.username } : {}),
    ...(cfg?.iconUrl ? { icon_url: cfg.iconUrl } : {}),
  };
}
