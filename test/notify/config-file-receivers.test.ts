import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { chooseNotifyConfig, type NotifyConfig } from '../../src/notify/notify-config.js';
import { redisClient, redisUrl } from '../support/redis.js';
import { startStack, type Stack } from '../support/stack.js';
import { testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

const hook = { kind: 'webhook', name: 'hook', url: 'http://127.0.0.1:1/hook', secretEnv: 'HOOK_SECRET' } as const;
const settings: NotifyConfig = { receivers: [hook], route: { receiver: 'hook' } };

describe('receivers in the config file', () => {
  let dir: string;
  let server: RecordingServer;
  let stack: Stack | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reflex-config-'));
    server = await startRecordingServer();
  });

  afterAll(async () => {
    await stack?.stop();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    if (!stack) return;
    const redis = redisClient();
    const keys = await redis.keys(`${stack.prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('a YAML config file with a signed webhook (secret in a file) delivers a real alert that the standardwebhooks library verifies', async () => {
    writeFileSync(join(dir, 'hook.secret'), `${testWebhookSecret}\n`, { mode: 0o600 });
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      `notifications:
  auditUrl: https://reflex.example/dashboard?instance={instance}
  receivers:
    - kind: webhook
      name: ops-hook
      url: ${server.url}
      secretFile: ${join(dir, 'hook.secret')}
      backoffMs: 100
  route:
    receiver: ops-hook
    groupBy: [kind, project]
    groupWaitMs: 100
    groupIntervalMs: 300
`,
    );
    // The stack's target, Redis and prefix, and the file's notifications over them.
    stack = await startStack({ redisUrl: redisUrl(), instances: [{ name: 'batch-1', config: {} }], label: 'cfgnotify', configFile: file });
    stack.sim.controls.crash('batch-1');
    await until('the alert', () => server.requests.length === 1, 15_000);
    const req = server.requests[0]!;
    const body = new Webhook(testWebhookSecret).verify(req.raw, req.headers as Record<string, string>) as {
      status: string;
      alerts: Record<string, unknown>[];
    };
    expect(body.status).toBe('firing');
    expect(body.alerts[0]).toMatchObject({
      kind: 'instance.crashed',
      instance: 'batch-1',
      severity: 'critical',
      auditUrl: 'https://reflex.example/dashboard?instance=batch-1',
    });
  });

  it('the config file names secrets, never holds them: a template, or a url with urlEnv, is refused naming the field', () => {
    const withReceiver = (receiver: Record<string, unknown>) => () =>
      parseConfig({ notifications: { receivers: [receiver], route: { receiver: 'hook' } } } as never);
    expect(withReceiver({ ...hook, template: 'x' })).toThrow(/notifications\.receivers\.0: Unrecognized key: "template"/);
    expect(withReceiver({ ...hook, urlEnv: 'HOOK_URL' })).toThrow(/notifications\.receivers\.0\.urlEnv: give exactly one of url, urlEnv, urlFile/);
    expect(withReceiver({ ...hook, secretEnv: undefined })).toThrow(
      /notifications\.receivers\.0\.secretEnv: give exactly one of secretEnv, secretFile/,
    );
    expect(withReceiver({ ...hook, secret: testWebhookSecret })).toThrow(/Unrecognized key: "secret"/);
    expect(() => parseConfig({ notifications: { receivers: [hook], route: { receiver: 'hook', filter: 'x' } } } as never)).toThrow(
      /notifications\.route: Unrecognized key: "filter"/,
    );
  });

  it('receivers come from one place: the config file, REFLEX_NOTIFY or the rules folder; two of them is a config error naming both', () => {
    expect(chooseNotifyConfig({ env: {} })).toBeUndefined();
    expect(chooseNotifyConfig({ config: settings, env: {} })).toEqual({ settings, from: 'the config file (notifications)' });
    expect(chooseNotifyConfig({ rulesFolder: settings, env: {} })?.from).toBe('the rules folder (a defineNotifications file)');
    expect(chooseNotifyConfig({ env: { REFLEX_NOTIFY: JSON.stringify(settings) } })).toEqual({
      settings: { ...settings, receivers: [expect.objectContaining(hook)] },
      from: 'the environment (REFLEX_NOTIFY)',
    });
    expect(() => chooseNotifyConfig({ config: settings, rulesFolder: settings, env: {} })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('the config file (notifications) and the rules folder (a defineNotifications file)'),
      }),
    );
    expect(() => chooseNotifyConfig({ config: settings, env: { REFLEX_NOTIFY: JSON.stringify(settings) } })).toThrow(
      /the config file \(notifications\) and the environment \(REFLEX_NOTIFY\)/,
    );
    expect(() =>
      chooseNotifyConfig({ env: { REFLEX_NOTIFY: JSON.stringify({ receivers: [{ ...hook, secretEnv: undefined }], route: { receiver: 'hook' } }) } }),
    ).toThrow(/REFLEX_NOTIFY: receivers\.0\.secretEnv: give exactly one of secretEnv, secretFile/);
  });
});
