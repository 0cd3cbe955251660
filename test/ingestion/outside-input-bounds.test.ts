import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { readConfigFile } from '../../src/config/config-file.js';
import { inboundWebhooks } from '../../src/http/inbound-webhooks.js';
import { jsonBody } from '../../src/http/json-body.js';
import { Secret } from '../../src/notify/secret.js';
import { keySpace } from '../../src/redis/key-space.js';
import { rejectedEntries } from '../support/frame-fuzz.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/**
 * Every other way outside input comes in is bounded before it is parsed or walked, as event
 * frames are (adversarial-frames.test.ts): inbound webhook bodies, the console's request bodies,
 * configuration files. Too deep, too large or self-referring input is refused with a reason.
 */
describe('outside input other than event frames', () => {
  const redis = redisClient();
  const prefix = uniquePrefix('bounds');
  const keys = keySpace(prefix);
  const queue = new Queue(keys.eventsQueue, { connection: redis, prefix: keys.bullPrefix });
  const dir = mkdtempSync(join(tmpdir(), 'reflex-bounds-'));

  afterAll(async () => {
    await queue.close();
    const left = await redis.keys(`*${prefix}*`);
    await Promise.all(left.map((k) => redis.del(k)));
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an Alertmanager body nested 5 000 deep unparsed (400), kept once with its reason and size, counted when it comes again', async () => {
    const token = 'bounds-token';
    process.env.REFLEX_TEST_BOUNDS_TOKEN = token;
    const app = inboundWebhooks({
      queue,
      redis,
      rejectedKey: keys.rejected,
      audit: new AuditLog(redis, keys.audit),
      mapping: { defaultTarget: 'local', targets: new Map([['local', 'local']]) },
      alertmanagerToken: Secret.fromEnv('REFLEX_TEST_BOUNDS_TOKEN'),
      logger: pino({ level: 'silent' }),
    });
    const body = `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":${nested(5000)}}}]}`;
    const post = () =>
      app.request('/alertmanager', { method: 'POST', body, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    const first = await post();
    expect(first.status).toBe(400);
    expect(await first.json()).toEqual({ error: 'nested deeper than 64 levels' });
    expect((await post()).status).toBe(400);
    expect((await rejectedEntries(redis, keys.rejected)).map((e) => [e.reason, e.bytes, e.repeats])).toEqual([
      ['POST /hooks/alertmanager: nested deeper than 64 levels', Buffer.byteLength(body), 2],
    ]);
  });

  it("takes a console body only within 64 KiB and 64 levels, so the route's schema refuses the rest", async () => {
    const app = new Hono().post('/', async (c) => c.json({ body: (await jsonBody(c)) ?? null }));
    const send = async (body: string) => ((await (await app.request('/', { method: 'POST', body })).json()) as { body: unknown }).body;
    expect(await send('{"reason":"maintenance","duration":"1h"}')).toEqual({ reason: 'maintenance', duration: '1h' });
    expect(await send(`{"reason":${nested(5000)}}`)).toBeNull();
    expect(await send(`{"reason":"${'x'.repeat(70 * 1024)}"}`)).toBeNull();
    expect(await send('{"reason":')).toBeNull();
  });

  it('refuses a configuration file nested too deep, an alias bomb and an alias to itself with CONFIG_INVALID, without ending the process', () => {
    const read = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      try {
        readConfigFile(join(dir, name));
        return 'read';
      } catch (err) {
        return `${(err as { code?: string }).code}: ${(err as Error).message}`;
      }
    };
    expect(read('deep.yaml', `redisUrl: redis://x\nextra: ${nested(5000)}\n`)).toMatch(/^CONFIG_INVALID: .*\[ and \{ nested deeper than 32 levels$/);
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 8 }, (_, i) => `${'bcdefghi'[i]}: &${'bcdefghi'[i]} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(',')}]`),
    ].join('\n');
    expect(read('bomb.yaml', bomb)).toMatch(/^CONFIG_INVALID: .*not valid YAML\/JSON/);
    expect(read('self.yaml', 'a: &a\n  b: *a\n')).toMatch(/^CONFIG_INVALID: /);
    let block = '';
    for (let i = 0; i < 1000; i++) block += `${' '.repeat(i)}k:\n`;
    expect(read('block.yaml', block)).toMatch(/^CONFIG_INVALID: /);
    expect(read('ok.yaml', 'redisUrl: redis://localhost:6379\n')).toBe('read');
  });
});
