import type { Alert } from '../alerts/alert.js';
import { reflexLines, auditReference, notificationTitle, truncate } from './message-text.js';
import { firingAlerts, resolvedAlerts, type Notification } from './notification.js';
import type { DiscordConfig } from './receiver-config.js';

/** Embed colours (decimal RGB) by severity; resolved alerts are green. */
export const discordColours = { critical: 0xd92d20, warning: 0xf79009, info: 0x2e90fa, resolved: 0x12b76a } as const;

/** Discord allows 10 embeds per message. */
const maxEmbeds = 10;

function alertEmbed(a: Alert): Record<string, unknown> {
  const status = a.status === 'resolved' ? 'RESOLVED' : a.severity.toUpperCase();
  return {
    title: truncate(`${status} ${a.kind}: ${a.instance}`, 256),
    description: truncate([a.summary, '', ...reflexLines(a)].join('\n'), 4096),
    color: a.status === 'resolved' ? discordColours.resolved : discordColours[a.severity],
    fields: [
      { name: 'Project', value: truncate(a.project, 1024), inline: true },
      { name: 'Target', value: truncate(a.target, 1024), inline: true },
      { name: 'Audit', value: truncate(auditReference(a), 1024), inline: false },
    ],
    timestamp: a.status === 'resolved' ? (a.endsAt ?? a.startsAt) : a.startsAt,
    ...(a.auditUrl ? { url: a.auditUrl } : {}),
  };
}

/**
 * The default Discord payload (execute webhook): `content` is the title, one embed per alert
 * (up to 10), and `allowed_mentions.parse: []` so an instance named `@everyone` pings nobody.
 */
export function discordPayload(n: Notification, cfg?: Pick<DiscordConfig, 'username' | 'avatarUrl' | 'titleTemplate'>): Record<string, unknown> {
  const alerts = [...firingAlerts(n), ...resolvedAlerts(n)];
  const hidden = alerts.length - maxEmbeds;
  return {
    content: truncate(
      hidden > 0 ? `${notificationTitle(n, cfg?.titleTemplate)} (${hidden} more not shown)` : notificationTitle(n, cfg?.titleTemplate),
      2000,
    ),
    embeds: alerts.slice(0, maxEmbeds).map(alertEmbed),
    allowed_mentions: { parse: [] },
    ...(cfg?.username ? { username: cfg.username } : {}),
    ...(cfg?.avatarUrl ? { avatar_url: cfg.avatarUrl } : {}),
  };
}
