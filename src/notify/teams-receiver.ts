import type { Alert } from '../alerts/alert.js';
import { reflexLines, auditReference, notificationTitle } from './message-text.js';
import { firingAlerts, resolvedAlerts, type Notification } from './notification.js';
import type { ReceiverConfig } from './receiver-config.js';

function alertItems(a: Alert): object[] {
  const head = a.status === 'resolved' ? 'RESOLVED' : a.severity.toUpperCase();
  return [
    {
      type: 'TextBlock',
      text: `${head} ${a.instance}: ${a.summary}`,
      wrap: true,
      weight: 'Bolder',
      color: a.status === 'resolved' ? 'Good' : a.severity === 'info' ? 'Default' : 'Attention',
      separator: true,
    },
    {
      type: 'FactSet',
      facts: [
        { title: 'Kind', value: a.kind },
        { title: 'Project', value: a.project },
        { title: 'Target', value: a.target },
        { title: 'Reflex', value: reflexLines(a).join('; ') },
        { title: 'Audit', value: auditReference(a) },
      ],
    },
  ];
}

/**
 * The default Teams payload for a workflow ("Post to a channel when a webhook request is
 * received") webhook: a message with one Adaptive Card attachment holding the title, a fact set
 * per alert, and an "Audit trail" button for each alert that has an audit URL.
 */
export function teamsPayload(n: Notification, cfg?: Pick<ReceiverConfig, 'titleTemplate'>): Record<string, unknown> {
  const alerts = [...firingAlerts(n), ...resolvedAlerts(n)];
  const links = alerts.filter((a) => a.auditUrl).map((a) => ({ type: 'Action.OpenUrl', title: `Audit trail: ${a.instance}`, url: a.auditUrl }));
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body: [
      { type: 'TextBlock', text: notificationTitle(n, cfg?.titleTemplate), wrap: true, size: 'Medium', weight: 'Bolder' },
      ...alerts.flatMap(alertItems),
    ],
    ...(links.length ? { actions: links } : {}),
  };
  return { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }] };
}
