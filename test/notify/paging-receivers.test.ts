import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/notify/receiver.js';
import { freePort } from '../support/free-port.js';
import { crashAlert, fastTimings, NotifierFixture } from './notifier-fixture.js';
import { startRecordingServer, type RecordedRequest, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

interface Mail {
  from: string | undefined;
  to: string[];
  user: string | undefined;
  secure: boolean;
  raw: string;
}

/** A local SMTP server (smtp-server) with STARTTLS and auth; `reject(n)` gives an SMTP error for the n-th DATA. */
async function startSmtp(opts: { password: string; startTls?: boolean; reject?: (n: number) => { code: number; text: string } | undefined }) {
  const mails: Mail[] = [];
  /** Every DATA received, refused or not. */
  const attempts: string[] = [];
  let datas = 0;
  const port = await freePort();
  const server = new SMTPServer({
    ...(opts.startTls === false ? { disabledCommands: ['STARTTLS'] } : {}),
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, cb) {
      if (auth.username === 'reflex' && auth.password === opts.password) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        datas++;
        attempts.push(Buffer.concat(chunks).toString('utf8'));
        const refusal = opts.reject?.(datas);
        if (refusal) return cb(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user as string | undefined,
          secure: session.secure,
          raw: Buffer.concat(chunks).toString('utf8').replace(/=\r\n/g, ''), // quoted-printable soft line breaks
        });
        cb();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, mails, attempts, datas: () => datas, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const headerOf = (raw: string, name: string) => new RegExp(`^${name}: (.*(?:\\r\\n[ \\t].*)*)`, 'mi').exec(raw)?.[1]?.replace(/\r\n[ \t]/g, ' ');

describe('receivers people page with', () => {
  let fx: NotifierFixture;
  const closers: (() => Promise<void>)[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    await fx?.close();
    await Promise.all(closers.splice(0).map((c) => c()));
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  /** Writes `content` to a file `name` in a fresh folder, removed after the test; returns its path. */
  const fileOfTest = (name: string, content: string): string => {
    dir = mkdtempSync(join(tmpdir(), 'reflex-paging-'));
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  };
  const server = async (...args: Parameters<typeof startRecordingServer>): Promise<RecordingServer> => {
    const s = await startRecordingServer(...args);
    closers.push(s.close);
    return s;
  };

  it('email over SMTP with STARTTLS and auth from the environment: subject, text, from/to/cc, a Message-ID kept across a retried send', async () => {
    fx = new NotifierFixture();
    const smtp = await startSmtp({ password: 'pw-from-env', reject: (n) => (n === 1 ? { code: 451, text: 'try again later' } : undefined) });
    closers.push(smtp.close);
    const notifier = fx.replica({
      receivers: [
        {
          kind: 'email',
          name: 'mail',
          host: '127.0.0.1',
          port: smtp.port,
          verifyCertificate: false,
          user: 'reflex',
          passwordEnv: 'SMTP_PASSWORD',
          from: 'Reflex <reflex@ops.example>',
          to: ['oncall@ops.example'],
          cc: 'lead@ops.example',
          backoffMs: 20,
        },
      ],
      env: { SMTP_PASSWORD: 'pw-from-env' },
      route: { receiver: 'mail', ...fastTimings },
    });
    const alert = await notifier.notify(crashAlert('web-1'));
    await until('the mail', () => smtp.mails.length === 1);
    expect(smtp.datas()).toBe(2);
    const mail = smtp.mails[0]!;
    expect(mail.secure).toBe(true); // upgraded with STARTTLS
    expect(mail.user).toBe('reflex');
    expect(mail.from).toBe('reflex@ops.example');
    expect(mail.to.sort()).toEqual(['lead@ops.example', 'oncall@ops.example']);
    expect(headerOf(mail.raw, 'Subject')).toBe('[FIRING:1] instance.crashed: web-1');
    expect(headerOf(mail.raw, 'Cc')).toBe('lead@ops.example');
    const messageId = headerOf(mail.raw, 'Message-ID')!;
    expect(messageId).toMatch(/^<reflex\.[0-9a-f]{32}@ops\.example>$/);
    expect(smtp.attempts.map((raw) => [headerOf(raw, 'Message-ID'), headerOf(raw, 'Date')])).toEqual([
      [messageId, headerOf(mail.raw, 'Date')],
      [messageId, headerOf(mail.raw, 'Date')],
    ]);
    expect(mail.raw).toContain('CRITICAL instance.crashed web-1 (project default on local): web-1 stopped without a request');
    expect(mail.raw).toContain('Reflex ran start: done, started (was Stopped) [operation op-web-1]');
    // The server holds the mail before its 250 reaches the sender, which audits the send after it.
    const trail = async () => (await fx.audit.read({ type: 'notification' })).map((r) => `${r.result} ${r.code ?? r.httpStatus}`);
    await until('the send audited', async () => (await trail()).length >= 2);
    expect(await trail()).toEqual(['retrying NOTIFY_DEFERRED', 'sent 250']);

    await notifier.resolve(alert.fingerprint);
    await until('the resolved mail', () => smtp.mails.length === 2);
    expect(headerOf(smtp.mails[1]!.raw, 'Subject')).toBe('[RESOLVED] instance.crashed: web-1');
    expect(headerOf(smtp.mails[1]!.raw, 'Message-ID')).not.toBe(messageId);
  });

  it('email: a server without STARTTLS is refused when it is required, and a wrong password is final; neither is retried', async () => {
    fx = new NotifierFixture();
    const plain = await startSmtp({ password: 'pw', startTls: false });
    const auth = await startSmtp({ password: 'right' });
    closers.push(plain.close, auth.close);
    const passwordFile = fileOfTest('password', 'wrong\n');
    const notifier = fx.replica({
      receivers: [
        {
          kind: 'email',
          name: 'plain',
          host: '127.0.0.1',
          port: plain.port,
          from: 'reflex@ops.example',
          to: 'a@ops.example',
          maxAttempts: 3,
          backoffMs: 20,
        },
        {
          kind: 'email',
          name: 'auth',
          host: '127.0.0.1',
          port: auth.port,
          verifyCertificate: false,
          user: 'reflex',
          passwordFile,
          from: 'reflex@ops.example',
          to: 'a@ops.example',
          maxAttempts: 3,
          backoffMs: 20,
        },
      ],
      route: { receiver: 'plain', ...fastTimings, routes: [{ match: { instance: 'web-2' }, receiver: 'auth' }] },
    });
    await notifier.notify(crashAlert('web-1'));
    await notifier.notify(crashAlert('web-2'));
    await until('both failures', async () => (await fx.audit.read({ type: 'notification' })).filter((r) => r.result === 'failed').length === 2);
    const failed = (await fx.audit.read({ type: 'notification' })).map((r) => `${r.result} ${r.receiver} ${r.code} ${r.attempt}`).sort();
    expect(failed).toEqual(['failed auth NOTIFY_REJECTED 1', 'failed plain NOTIFY_REJECTED 1']);
    expect(JSON.stringify(await fx.audit.read())).not.toContain('wrong');
  });

  it('PagerDuty Events v2: a trigger with the documented fields, then a resolve with the same dedup_key; routing key from a file', async () => {
    fx = new NotifierFixture();
    const pd = await server(() => ({
      status: 202,
      headers: { 'content-type': 'application/json' },
      body: '{"status":"success","message":"Event processed"}',
    }));
    const routingKeyFile = fileOfTest('routing-key', 'R0UT1NGKEY0000000000000000000000\n');
    const notifier = fx.replica({
      receivers: [{ kind: 'pagerduty', name: 'pd', url: pd.url, routingKeyFile }],
      route: { receiver: 'pd', ...fastTimings },
    });
    const alert = await notifier.notify(crashAlert('web-1', { auditUrl: 'https://reflex.example/audit/evt-web-1' }));
    await until('the trigger', () => pd.requests.length === 1);
    await notifier.resolve(alert.fingerprint);
    await until('the resolve', () => pd.requests.length === 2);
    const [trigger, resolve] = pd.requests.map((r) => r.json as Record<string, unknown>) as [Record<string, unknown>, Record<string, unknown>];
    expect(trigger).toMatchObject({
      routing_key: 'R0UT1NGKEY0000000000000000000000',
      event_action: 'trigger',
      client: 'Reflex',
      client_url: 'https://reflex.example/audit/evt-web-1',
      payload: {
        source: 'local/default/web-1',
        severity: 'critical',
        timestamp: '2025-01-02T03:04:05.000Z',
        component: 'web-1',
        group: 'default',
        class: 'instance.crashed',
      },
    });
    expect((trigger.payload as { summary: string }).summary).toBe(
      'instance.crashed web-1 (project default on local): web-1 stopped without a request (status 102 Stopped)',
    );
    expect(resolve).toEqual({ routing_key: 'R0UT1NGKEY0000000000000000000000', dedup_key: trigger.dedup_key, event_action: 'resolve' });
    expect(String(trigger.dedup_key).length).toBeLessThanOrEqual(255);
  });

  it('Alertmanager: a list of postableAlerts a strict server accepts; resolved = endsAt set to the recovery', async () => {
    fx = new NotifierFixture();
    const problems: string[] = [];
    const validate = (req: RecordedRequest): string[] => {
      const out: string[] = [];
      if (req.path !== '/api/v2/alerts') out.push(`path ${req.path}`);
      if (!Array.isArray(req.json)) return [...out, 'body is not a list'];
      for (const a of req.json as Record<string, unknown>[]) {
        const extra = Object.keys(a).filter((k) => !['labels', 'annotations', 'startsAt', 'endsAt', 'generatorURL'].includes(k));
        if (extra.length) out.push(`unknown fields ${extra.join(',')}`);
        for (const [k, v] of Object.entries((a.labels ?? {}) as Record<string, unknown>))
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || typeof v !== 'string') out.push(`label ${k}`);
        for (const v of Object.values((a.annotations ?? {}) as Record<string, unknown>))
          if (typeof v !== 'string') out.push('annotation not a string');
        for (const t of ['startsAt', 'endsAt'] as const)
          if (a[t] !== undefined && Number.isNaN(Date.parse(String(a[t])))) out.push(`${t} not a date`);
        if (a.generatorURL !== undefined && !URL.canParse(String(a.generatorURL))) out.push('generatorURL not a URL');
      }
      return out;
    };
    const am = await server((_n, req) => {
      const p = validate(req);
      problems.push(...p);
      return p.length ? { status: 400, body: p.join('; ') } : { status: 200 };
    });
    const notifier = fx.replica({
      receivers: [{ kind: 'alertmanager', name: 'am', url: am.url.replace(/\/hook$/, '/'), bearerTokenEnv: 'AM_TOKEN' }],
      env: { AM_TOKEN: 'am-token-123' },
      route: { receiver: 'am', ...fastTimings },
    });
    const alert = await notifier.notify(crashAlert('web-1', { labels: { 'team.name': 'db' }, auditUrl: 'https://reflex.example/audit/evt-web-1' }));
    await until('the firing alert', () => am.requests.length === 1);
    await notifier.resolve(alert.fingerprint, { endsAt: '2025-01-02T03:05:00.000Z' });
    await until('the resolved alert', () => am.requests.length === 2);
    expect(problems).toEqual([]);
    expect(am.requests[0]!.headers.authorization).toBe('Bearer am-token-123');
    const [firing, resolved] = am.requests.map((r) => (r.json as Record<string, unknown>[])[0]!) as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(firing.labels).toEqual({
      alertname: 'instance.crashed',
      severity: 'critical',
      target: 'local',
      project: 'default',
      instance: 'web-1',
      source: 'reflex',
      team_name: 'db',
    });
    expect(Date.parse(String(firing.endsAt))).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    expect(firing.generatorURL).toBe('https://reflex.example/audit/evt-web-1');
    expect(resolved.labels).toEqual(firing.labels);
    expect(resolved.endsAt).toBe('2025-01-02T03:05:00.000Z');
  });

  it('CloudEvents and webhooks send auth headers read from the environment or a file; a literal credential header is refused', async () => {
    fx = new NotifierFixture();
    const ce = await server();
    const apiKeyFile = fileOfTest('api-key', 'key-from-file\n');
    const notifier = fx.replica({
      receivers: [
        {
          kind: 'cloudevents',
          name: 'bus',
          url: ce.url,
          bearerTokenEnv: 'BUS_TOKEN',
          headersFrom: { 'X-Api-Key': { file: apiKeyFile } },
          headers: { 'X-Team': 'ops' },
        },
      ],
      env: { BUS_TOKEN: 'bus-token-456' },
      route: { receiver: 'bus', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-1'));
    await until('the event', () => ce.requests.length === 1);
    expect(ce.requests[0]!.headers).toMatchObject({ authorization: 'Bearer bus-token-456', 'x-api-key': 'key-from-file', 'x-team': 'ops' });
    expect(JSON.stringify(notifier.receivers.get('bus'))).not.toContain('bus-token-456');
    for (const name of ['Authorization', 'X-Auth-Token', 'Cookie']) {
      expect(() =>
        createReceiver({ kind: 'webhook', name: 'w', url: 'http://127.0.0.1:1/', secretEnv: 'S', headers: { [name]: 'literal' } }, { S: 'x' }),
      ).toThrow(/headersFrom/);
    }
  });

  it('a titleTemplate sets the title from placeholders; an unknown placeholder is a configuration error', async () => {
    fx = new NotifierFixture();
    const slack = await server();
    const notifier = fx.replica({
      receivers: [
        { kind: 'slack', name: 'slack', url: slack.url, titleTemplate: '{status} ({firing} firing) {kinds} in {group.project}: {instances}' },
      ],
      route: { receiver: 'slack', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-1'));
    await until('the message', () => slack.requests.length === 1);
    expect((slack.requests[0]!.json as { text: string }).text).toBe('FIRING (1 firing) instance.crashed in default: web-1');
    expect(() => createReceiver({ kind: 'slack', name: 's', url: 'http://127.0.0.1:1/', titleTemplate: '{status} {alertname}' })).toThrow(
      /unknown placeholder\(s\) \{alertname\}/,
    );
  });
});
