import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reflexInProcess } from './in-process.js';

/**
 * `reflex run --print-config` shows where each receiver posts, never the secret in its URL: a chat
 * webhook's path is its token, other endpoints may carry one in the path, the query or the userinfo.
 * A chat webhook written as plain `url:` is warned about: it belongs in `urlEnv` or `urlFile`.
 */
const dir = mkdtempSync(join(tmpdir(), 'reflex-print-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const receivers = [
  { kind: 'slack', name: 'slack', url: 'https://hooks.slack.com/services/T0001/B0002/slack-token-XYZ123' },
  { kind: 'discord', name: 'discord', url: 'https://discord.com/api/webhooks/1234/discord-token-XYZ123' },
  {
    kind: 'teams',
    name: 'teams',
    url: 'https://prod.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=teams-token-XYZ123',
  },
  { kind: 'mattermost', name: 'mattermost', url: 'https://chat.example.org/hooks/mattermost-token-XYZ123' },
  {
    kind: 'webhook',
    name: 'hook',
    url: 'https://user:hook-password-XYZ123@hooks.example.org/in/path-token-XYZ123?code=query-token-XYZ123',
    secretEnv: 'HOOK_KEY',
  },
  { kind: 'alertmanager', name: 'am', url: 'http://127.0.0.1:9093' },
  { kind: 'slack', name: 'from-env', urlEnv: 'SLACK_URL' },
];

describe('reflex run --print-config and receiver URLs', () => {
  it('shows each receiver URL as its origin only, whatever secret it carries', async () => {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ target: 'unix:///x.sock', notifications: { receivers, route: { receiver: 'slack' } } }));
    const res = await reflexInProcess(['run', '--print-config', '--config', file]);
    expect(res.code).toBe(0);
    expect(res.stdout).not.toMatch(/token|password/i);
    const shown = JSON.parse(res.stdout) as { notifications: { receivers: { name: string; url?: string; urlEnv?: string }[] } };
    expect(Object.fromEntries(shown.notifications.receivers.map((r) => [r.name, r.url ?? r.urlEnv]))).toEqual({
      slack: 'https://hooks.slack.com/[redacted]',
      discord: 'https://discord.com/[redacted]',
      teams: 'https://prod.westeurope.logic.azure.com/[redacted]',
      mattermost: 'https://chat.example.org/[redacted]',
      hook: 'https://[redacted]@hooks.example.org/[redacted]',
      am: 'http://127.0.0.1:9093',
      'from-env': 'SLACK_URL',
    });
  });

  it('shows the names of the variables and files secrets are read from, and redacts the secrets themselves', async () => {
    const file = join(dir, 'names.json');
    writeFileSync(
      file,
      JSON.stringify({
        target: 'unix:///x.sock',
        dashboardToken: 'dashboard-token-XYZ123456',
        inbound: { alertmanager: { tokenEnv: 'AM_TOKEN' }, webhook: { secretEnv: ['HOOK_SECRET_OLD', 'HOOK_SECRET_NEW'] } },
        history: { store: 'postgres', postgresUrlEnv: 'AUDIT_PG_URL' },
        notifications: {
          receivers: [
            { kind: 'webhook', name: 'hook', urlEnv: 'HOOK_URL', secretEnv: 'HOOK_KEY', headersFrom: { Authorization: { env: 'HOOK_AUTH' } } },
            { kind: 'pagerduty', name: 'pd', routingKeyFile: '/etc/reflex/pd-key' },
          ],
          route: { receiver: 'hook' },
        },
      }),
    );
    const res = await reflexInProcess(['run', '--print-config', '--config', file], { REDIS_URL: 'redis://:redis-password-XYZ123@127.0.0.1:6379' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toMatch(/XYZ123/);
    const shown = JSON.parse(res.stdout);
    expect(shown.dashboardToken).toBe('[redacted]');
    expect(shown.redisUrl).toBe('redis://[redacted]@127.0.0.1:6379');
    expect(shown.inbound).toEqual({ alertmanager: { tokenEnv: 'AM_TOKEN' }, webhook: { secretEnv: ['HOOK_SECRET_OLD', 'HOOK_SECRET_NEW'] } });
    expect(shown.history.postgresUrlEnv).toBe('AUDIT_PG_URL');
    expect(shown.notifications.receivers[0]).toMatchObject({
      urlEnv: 'HOOK_URL',
      secretEnv: 'HOOK_KEY',
      headersFrom: { Authorization: { env: 'HOOK_AUTH' } },
    });
    expect(shown.notifications.receivers[1]).toMatchObject({ routingKeyFile: '/etc/reflex/pd-key' });
  });

  it('warns, once per receiver, about a chat webhook written as plain url', async () => {
    const file = join(dir, 'warn.json');
    writeFileSync(file, JSON.stringify({ target: 'unix:///x.sock', notifications: { receivers, route: { receiver: 'slack' } } }));
    const res = await reflexInProcess(['run', '--print-config', '--config', file]);
    const warnings = res.stderr.trim().split('\n');
    expect(warnings.map((w) => /^reflex: warning: notification receiver (\S+): /.exec(w)?.[1])).toEqual(['slack', 'discord', 'teams', 'mattermost']);
    expect(warnings[0]).toMatch(/name that with urlEnv or urlFile$/);
    expect(res.stderr).not.toMatch(/token-XYZ/);
  });
});
