import { createTransport, type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Alert } from '../alerts/alert.js';
import { DeliveryError } from './delivery-error.js';
import { alertPlace, auditReference, notificationTitle, reflexLines, truncate } from './message-text.js';
import { firingAlerts, resolvedAlerts, type Notification } from './notification.js';
import type { EmailConfig } from './receiver-config.js';
import type { Secret } from './secret.js';

/** Subjects longer than this are cut (RFC 5322 recommends lines under 78 characters; clients show ~100). */
const maxSubject = 200;

function alertText(a: Alert): string {
  const head = a.status === 'resolved' ? 'RESOLVED' : a.severity.toUpperCase();
  const ended = a.status === 'resolved' && a.endsAt ? `, ended ${a.endsAt}` : '';
  return [
    `${head} ${a.kind} ${alertPlace(a)}: ${a.summary}`,
    `  started ${a.startsAt}${ended}`,
    ...reflexLines(a).map((l) => `  ${l}`),
    `  audit: ${auditReference(a)}`,
  ].join('\n');
}

/** The plain-text body: the title, then one paragraph per alert (firing first). */
export function emailText(n: Notification, cfg?: Pick<EmailConfig, 'titleTemplate'>): string {
  return [notificationTitle(n, cfg?.titleTemplate), ...[...firingAlerts(n), ...resolvedAlerts(n)].map(alertText)].join('\n\n') + '\n';
}

/**
 * The Message-ID of a notification's mail: the notification id at the sender's domain, the same on
 * every retry and replica, so a mail that went out twice (the server's answer to the first
 * attempt was lost) is recognisably one message to clients and filters.
 */
export function emailMessageId(n: Notification, from: string): string {
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from)?.[1] ?? 'reflex.invalid';
  return `<reflex.${n.id}@${domain}>`;
}

/** SMTP failures as delivery errors: 4xx replies and connection trouble are retried, 5xx replies are final. */
function deliveryError(err: unknown, name: string, timeoutMs: number, scrub: (s: string) => string): DeliveryError {
  const e = err as { code?: string; responseCode?: number; message?: string };
  const detail = scrub(`${name}: ${e.message ?? String(err)}`);
  if (e.responseCode !== undefined && e.responseCode >= 500)
    return new DeliveryError('NOTIFY_REJECTED', detail, { status: e.responseCode, cause: err });
  if (e.responseCode !== undefined && e.responseCode >= 400)
    return new DeliveryError('NOTIFY_DEFERRED', detail, { status: e.responseCode, cause: err });
  if (e.code === 'ETIMEDOUT') return new DeliveryError('TIMEOUT', scrub(`${name}: no answer within ${timeoutMs} ms`), { cause: err });
  // Failed auth or a server without the STARTTLS the configuration requires: a retry cannot help.
  if (e.code === 'EAUTH' || e.code === 'ETLS' || e.code === 'EENVELOPE') return new DeliveryError('NOTIFY_REJECTED', detail, { cause: err });
  return new DeliveryError('NETWORK', detail, { cause: err });
}

/** Sends notifications as plain-text mail over SMTP (nodemailer); one connection per message. */
export class EmailSender {
  private readonly transport: Transporter<SMTPTransport.SentMessageInfo>;

  constructor(
    private readonly cfg: EmailConfig,
    auth: { user: Secret | string; password: Secret } | undefined,
    private readonly scrub: (text: string) => string,
  ) {
    this.transport = createTransport({
      host: cfg.host,
      port: cfg.port ?? (cfg.tls ? 465 : 587),
      secure: cfg.tls,
      requireTLS: !cfg.tls && (cfg.requireStartTls ?? true),
      tls: { rejectUnauthorized: cfg.verifyCertificate },
      connectionTimeout: cfg.timeoutMs,
      greetingTimeout: cfg.timeoutMs,
      socketTimeout: cfg.timeoutMs,
      ...(auth ? { auth: { user: typeof auth.user === 'string' ? auth.user : auth.user.reveal(), pass: auth.password.reveal() } } : {}),
    });
  }

  /**
   * Sends one mail; resolves with the server's reply code (250). Date and Message-ID come from the
   * notification and when it was queued, so a retry sends the same message.
   */
  async send(n: Notification, createdAt: Date): Promise<number> {
    try {
      const info = await this.transport.sendMail({
        from: this.cfg.from,
        to: this.cfg.to,
        ...(this.cfg.cc ? { cc: this.cfg.cc } : {}),
        subject: truncate(notificationTitle(n, this.cfg.titleTemplate), maxSubject),
        text: emailText(n, this.cfg),
        messageId: emailMessageId(n, this.cfg.from),
        date: createdAt,
        headers: { 'X-Reflex-Notification': n.id },
      });
      return Number(/^(\d{3})/.exec(info.response ?? '')?.[1] ?? 250);
    } catch (err) {
      throw deliveryError(err, this.cfg.name, this.cfg.timeoutMs, this.scrub);
    }
  }
}
