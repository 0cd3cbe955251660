import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema, parseConfig, type ConfigInput } from '../../src/config/config.js';
import { createLogger } from '../../src/log/logger.js';
import { isSensitiveName, redactText, redactUrl } from '../../src/log/redaction.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { freePort } from '../metrics/observability-bed.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess } from '../support/reflex-process.js';
import { until } from '../support/wait.js';

// A secret with an `@` in it: a mask that stops at the first `@` shows its tail.
const head = 'CANARY-7f3a9c';
const tail = 'tail-5b1e2d';
const secret = `${head}@${tail}`;
const writeSecret = 'CANARY-w41e-0c9d88f1';

/** The parts of every canary that must never be printed, stored or logged. */
function leaks(text: string): string[] {
  return [head, tail, 'CANARY-w41e', encodeURIComponent(secret), Buffer.from(secret).toString('base64')].filter((s) => text.includes(s));
}

const withPassword = (url: string, password: string) => {
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
};

const pem = `-----BEGIN PRIVATE KEY-----\nMIIE${head}\n${tail}==\n-----END PRIVATE KEY-----`;

/** Every way a secret can sit in the configuration, each with the value that carries it. */
const carriers: Record<string, ConfigInput> = {
  dashboardToken: { dashboardToken: secret },
  dashboardWriteToken: { dashboardToken: 'read-token-of-some-length', dashboardWriteToken: writeSecret },
  'redisUrl (password with @)': { redisUrl: `redis://:${secret}@127.0.0.1:6379` },
  'redisUrl (percent-encoded)': { redisUrl: `redis://:${encodeURIComponent(secret)}@127.0.0.1:6379/0` },
  'redisUrl (user and password, password in the query too)': {
    redisUrl: `redis://default:${secret}@127.0.0.1:6379/0?password=${encodeURIComponent(secret)}`,
  },
  'target with userinfo': { target: `https://ops:${secret}@lxd.example:8443` },
  'targets entry with userinfo': { targets: [{ name: 'a', target: `https://ops:${secret}@lxd.example:8443` }] },
  'clientKey holding a key instead of a path': { clientKey: pem },
  'misspelt secret field': { dashbordToken: secret } as ConfigInput,
  'unknown field in a targets entry': { targets: [{ name: 'a', target: 'unix:///x', token: secret }] } as unknown as ConfigInput,
  'receiver url in notifications': {
    notifications: { receivers: [{ name: 'ops', kind: 'slack', url: `https://hooks.example/services/${secret}` }] },
  } as unknown as ConfigInput,
};

/** Configurations that fail in the carrying field itself. */
const selfInvalid: Record<string, ConfigInput> = {
  'dashboardToken too short': { dashboardToken: head },
  'dashboardWriteToken equal to dashboardToken': { dashboardToken: secret, dashboardWriteToken: secret },
  'dashboardWriteToken without dashboardToken': { dashboardWriteToken: writeSecret },
  'redisUrl with a bad port': { redisUrl: `redis://:${secret}@127.0.0.1:notaport` },
  'redisUrl that is no URL at all': { redisUrl: `//:${secret}@127.0.0.1:6379` },
  'clientKey given with targets': { targets: [{ name: 'a', target: 'unix:///x' }], clientKey: pem },
  'receiver url that is no URL': { notifications: { receivers: [{ name: 'ops', kind: 'slack', url: `hooks ${secret}` }] } } as unknown as ConfigInput,
};

function thrownBy(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a validation error');
}

/** Everything an error can show: its message, util.inspect (stack, cause chain, own fields) and JSON. */
const errorText = (err: Error) => `${err.message}\n${inspect(err, { depth: 10 })}\n${JSON.stringify(err)}`;

describe('secrets never appear in validation errors', () => {
  it('covers every configuration field whose name says it is secret', () => {
    const secretFields = Object.keys(configSchema.shape).filter((k) => isSensitiveName(k) && k !== 'clientKey');
    expect(secretFields.length).toBeGreaterThanOrEqual(2);
    for (const f of secretFields) expect(Object.keys(carriers), f).toContain(f);
  });

  for (const [name, carrier] of Object.entries(carriers)) {
    it(`hides ${name} when another field is invalid`, () => {
      const err = thrownBy(() => parseConfig({ ...carrier, httpPort: -1, logLevel: 'loud' as never }));
      expect(err.message).toContain('httpPort');
      expect(leaks(errorText(err))).toEqual([]);
    });
  }

  for (const [name, input] of Object.entries(selfInvalid)) {
    it(`hides the value when ${name}`, () => {
      const err = thrownBy(() => parseConfig(input));
      expect(err.message).toContain('invalid configuration');
      expect(leaks(errorText(err))).toEqual([]);
    });
  }

  it('still says which field and what was given when nothing is secret', () => {
    const err = thrownBy(() => parseConfig({ httpPort: 70_000, redisUrl: `redis://:${secret}@127.0.0.1:99999` }));
    expect(err.message).toMatch(/httpPort: .*\(got 70000\)/);
    expect(err.message).toContain('redis://[redacted]@127.0.0.1:99999');
  });
});

describe('one URL mask', () => {
  it('hides everything up to the last @ of the authority, and secret query parameters', () => {
    expect(redactUrl('redis://:p@ss@host:6379')).toBe('redis://[redacted]@host:6379');
    expect(redactUrl('redis://:p%40ss@host:6379/0')).toBe('redis://[redacted]@host:6379/0');
    expect(redactUrl('redis://user:pw@host:6379/0?password=x&db=1')).toBe('redis://[redacted]@host:6379/0?password=[redacted]&db=1');
    expect(redactUrl('redis://host:6379')).toBe('redis://host:6379');
    expect(redactUrl('https://hooks.example/services/T0/B0/xyz', { hidePath: true })).toBe('https://hooks.example/[redacted]');
    expect(redactText(`cannot reach redis://:${secret}@h:1 (refused), retrying`)).toBe('cannot reach redis://[redacted]@h:1 (refused), retrying');
  });
});

describe('secrets never appear in log lines', () => {
  it('redacts secret fields, URLs in messages and in error texts, and keeps the standard error fields', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    const logger = createLogger('trace', { destination: sink });
    const redis = `redis://:${secret}@127.0.0.1:6379`;
    logger.info({ config: { dashboardToken: secret, dashboardWriteToken: writeSecret, redisUrl: redis } }, 'config');
    logger.info({ dashboardToken: secret, redisUrl: redis, headers: { authorization: `Bearer ${secret}` } }, 'top level');
    logger.warn(`could not reach ${redis}`);
    logger.error({ err: new Error(`connect to ${redis} failed`, { cause: new Error(`AUTH with token=${writeSecret}`) }) }, 'failed');
    const text = lines.join('');
    expect(leaks(text)).toEqual([]);
    const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'failed')!;
    expect(failed.err).toMatchObject({ type: 'Error', message: expect.stringContaining('connect to redis://[redacted]@127.0.0.1:6379 failed') });
    expect(String((failed.err as { stack: string }).stack)).toContain('secret-canary.test.ts');
  });
});

describe('secrets never appear in what reflex run and reflex doctor print, nor in the audit stream', () => {
  let dir: string;
  let sim: RunningSimulator;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reflex-canary-'));
    sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopMs: 100, stopHookMs: 100 } });
    sim.controls.addInstance({ name: 'canary-web', config: { 'user.reflex.autorestart': 'true' } });
  });
  afterAll(async () => {
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const all = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

  it('an invalid configuration holding every secret: run and doctor fail naming the field, printing none', async () => {
    const config = file(
      'invalid.json',
      JSON.stringify({
        dashboardToken: secret,
        dashboardWriteToken: writeSecret,
        redisUrl: withPassword(redisUrl(), secret),
        target: `https://ops:${secret}@lxd.example:8443`,
        clientKey: pem,
        dashbordToken: secret,
        httpPort: 'not a port',
      }),
    );
    for (const args of [
      ['run', '--config', config],
      ['doctor', '--config', config],
    ]) {
      const r = await runReflex(args);
      expect(r.code, args[0]).toBe(3);
      expect(r.stderr).toContain('httpPort');
      expect(leaks(all(r)), args[0]).toEqual([]);
    }
  });

  it('a configuration file that is not valid YAML, with the secret on the broken line', async () => {
    const config = file('broken.yaml', `httpPort: 9464\ndashboardToken: ${secret}: [\n`);
    const r = await runReflex(['run', '--config', config]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('line 2');
    expect(leaks(all(r))).toEqual([]);
  });

  it('secrets from the environment: a too-short token, a REFLEX_NOTIFY that is not JSON', async () => {
    const short = await runReflex(['run', '--target', `unix://${sim.socketPath}`], { REFLEX_DASHBOARD_TOKEN: head });
    expect(short.code).toBe(3);
    expect(leaks(all(short))).toEqual([]);
    const notify = startReflexProcess(
      [
        'run',
        '--target',
        `unix://${sim.socketPath}`,
        '--redis',
        redisUrl(),
        '--rules',
        'rules',
        '--prefix',
        uniquePrefix('canary'),
        '--http-port',
        '0',
      ],
      { REFLEX_NOTIFY: `{"receivers": [{"name": "ops", "kind": "slack", "url": "https://hooks.example/${secret}"` },
    );
    let stderr = '';
    notify.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await until(
        'REFLEX_NOTIFY named, or reflex run gone',
        () => `${stderr}${JSON.stringify(notify.logs)}`.includes('REFLEX_NOTIFY') || notify.child.exitCode !== null,
        90_000,
        100,
      );
    } finally {
      await notify.stop();
    }
    const printed = `${stderr}\n${JSON.stringify(notify.logs)}`;
    expect(printed).toContain('REFLEX_NOTIFY is not JSON');
    expect(leaks(printed)).toEqual([]);
  }, 150_000);

  it('a valid configuration: reflex run logs (debug), heals a crash, writes audit records; doctor reports; none shows a secret', async () => {
    const prefix = uniquePrefix('canary');
    const port = await freePort();
    const config = file(
      'valid.json',
      JSON.stringify({
        target: `unix://${sim.socketPath}`,
        redisUrl: withPassword(redisUrl(), secret),
        rulesDir: resolve('rules'),
        prefix,
        resyncIntervalMs: 0,
        httpPort: port,
        dashboardToken: secret,
        dashboardWriteToken: writeSecret,
      }),
    );
    const reflex = startReflexProcess(['run', '--config', config], { REFLEX_LOG_LEVEL: 'debug' });
    let stderr = '';
    reflex.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await reflex.waitForLog('reflex running');
      await reflex.waitForLog('event stream connected');
      // Requests that log or fail: a login, a refused write, a wrong token.
      await fetch(`http://127.0.0.1:${port}/dashboard?token=${encodeURIComponent(secret)}`, { redirect: 'manual' });
      await fetch(`http://127.0.0.1:${port}/dashboard/queues/api/queues/x/add`, {
        method: 'POST',
        headers: { authorization: `Bearer ${writeSecret}`, origin: 'http://evil.example' },
        body: '{}',
      });
      sim.controls.crash('canary-web');
      const redis = redisClient();
      try {
        const records = await until(
          'the heal audited (an outcome record)',
          async () => {
            const all = await redis.xrange(keySpace(prefix).audit, '-', '+');
            return all.some(([, fields]) => fields.some((v) => v.includes('"type":"outcome"'))) && all;
          },
          20_000,
          100,
        );
        expect(leaks(JSON.stringify(records))).toEqual([]);
      } finally {
        redis.disconnect();
      }
    } finally {
      await reflex.stop();
    }
    expect(reflex.logs.length).toBeGreaterThan(5);
    expect(leaks(JSON.stringify(reflex.logs))).toEqual([]);
    expect(leaks(stderr)).toEqual([]);

    const doctor = await runReflex(['doctor', '--config', config]);
    expect(doctor.stdout).toMatch(/redis/);
    expect(doctor.stdout).toContain('[redacted]@');
    expect(leaks(all(doctor))).toEqual([]);
    const help = await runReflex(['doctor', '--help']);
    if (help.stdout.includes('--json')) {
      const json = await runReflex(['doctor', '--json', '--config', config]);
      expect(json.stdout).toContain('"redis');
      expect(leaks(all(json))).toEqual([]);
    }
  });
});
