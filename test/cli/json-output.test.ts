import { Queue, QueueEvents, Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { CrashLoopBudget } from '../../src/remediation/crash-loop-budget.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { reflexInProcess } from './in-process.js';

const redis = redisClient();
afterAll(() => redis.disconnect());

/** `--json` prints exactly one JSON document on stdout: it parses whole, and nothing is on stderr. */
async function jsonOf(args: string[]): Promise<{ code: number; doc: unknown }> {
  const res = await reflexInProcess([...args, '--json'], { NO_COLOR: '', FORCE_COLOR: '1' });
  expect(res.stderr).toBe('');
  expect(res.stdout.endsWith('\n') && res.stdout.indexOf('\n') === res.stdout.length - 1, `one line: ${res.stdout}`).toBe(true);
  return { code: res.code, doc: JSON.parse(res.stdout) };
}

describe('--json on listing commands', () => {
  it('silence list: an array of silences, [] when there are none', async () => {
    const common = ['--redis', redisUrl(), '--prefix', uniquePrefix('json-sil')];
    expect((await jsonOf(['silence', 'list', ...common])).doc).toEqual([]);
    const added = await reflexInProcess(['silence', 'add', '--project', 'web', '--duration', '2h', '--reason', 'migration', ...common]);
    expect(added.code, added.stderr).toBe(0);
    const { code, doc } = await jsonOf(['silence', 'list', ...common]);
    expect(code).toBe(0);
    expect(doc).toEqual([
      {
        id: expect.any(String),
        scope: { project: 'web' },
        mutes: ['actions', 'notifications'],
        reason: 'migration',
        origin: 'cli',
        createdBy: expect.any(String),
        createdAt: expect.any(String),
        until: expect.any(String),
      },
    ]);
  });

  it('quarantine list: an array of {target, project, instance, identity, since, until}', async () => {
    const prefix = uniquePrefix('json-q');
    const since = Date.parse('2026-01-02T03:04:05.000Z');
    await redis.set(
      keySpace(prefix).quarantine({ target: 'unix:///var/lib/lxd/unix.socket', project: 'web', instance: 'api-1' }),
      String(since),
      'PX',
      3_600_000,
    );
    // A crash loop of the instance whose volatile.uuid is U quarantines it under its name, for U.
    const ref = { target: 'unix:///var/lib/lxd/unix.socket', project: 'web', instance: 'api-2' };
    const U = '0b5a7c1e-0000-4000-8000-00000000000a';
    await new CrashLoopBudget(redis).reserve(
      { restarts: keySpace(prefix).restarts(ref), quarantine: keySpace(prefix).quarantine(ref) },
      'crash-1',
      { maxRestarts: 0 },
      since + 1000,
      U,
    );
    const { code, doc } = await jsonOf(['quarantine', 'list', '--redis', redisUrl(), '--prefix', prefix]);
    expect(code).toBe(0);
    expect(doc).toEqual([
      {
        target: 'unix:///var/lib/lxd/unix.socket',
        project: 'web',
        instance: 'api-1',
        identity: null,
        since: '2026-01-02T03:04:05.000Z',
        until: expect.any(String),
      },
      { ...ref, identity: U, since: '2026-01-02T03:04:06.000Z', until: expect.any(String) },
    ]);
    const until = Date.parse((doc as { until: string }[])[0]!.until);
    expect(until - Date.now()).toBeGreaterThan(3_500_000);
  });

  it('dlq list: an array of the failed action jobs with why they failed', async () => {
    const prefix = uniquePrefix('json-dlq');
    const keys = keySpace(prefix);
    const clients = [redisClient(), redisClient(), redisClient()];
    const queue = new Queue(keys.actionsQueue, { connection: clients[0]!, prefix: keys.bullPrefix });
    const events = new QueueEvents(keys.actionsQueue, { connection: clients[1]!, prefix: keys.bullPrefix });
    const worker = new Worker(
      keys.actionsQueue,
      async () => {
        throw new Error('instance is busy');
      },
      { connection: clients[2]!, prefix: keys.bullPrefix },
    );
    try {
      await events.waitUntilReady();
      const job = await queue.add(
        'start',
        { action: 'start', target: 't1', project: 'default', instance: 'web-1', rule: 'restart-on-crash' },
        { attempts: 1 },
      );
      await expect(job.waitUntilFinished(events, 20_000)).rejects.toThrow('instance is busy');
    } finally {
      await worker.close();
      await events.close();
      await queue.close();
      for (const c of clients) c.disconnect();
    }
    const { code, doc } = await jsonOf(['dlq', 'list', '--redis', redisUrl(), '--prefix', prefix]);
    expect(code).toBe(0);
    expect(doc).toEqual([
      {
        id: expect.any(String),
        action: 'start',
        target: 't1',
        project: 'default',
        instance: 'web-1',
        rule: 'restart-on-crash',
        attempts: 1,
        failedAt: expect.any(String),
        reason: 'instance is busy',
      },
    ]);
  });

  it('doctor: one object with ok and every check, exit 1 when a check fails', async () => {
    const { code, doc } = await jsonOf(['doctor', '--redis', 'redis://127.0.0.1:1', '--target', 'unix:///nonexistent.sock', '--rules', 'rules']);
    expect(code).toBe(1);
    const report = doc as { ok: boolean; checks: { name: string; ok: boolean; warning: boolean; detail: string; fix: string | null }[] };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.name === 'redis')).toMatchObject({
      ok: false,
      warning: false,
      detail: expect.stringContaining('ECONNREFUSED'),
      fix: expect.stringContaining('redis'),
    });
    for (const c of report.checks) expect(Object.keys(c).sort()).toEqual(['detail', 'fix', 'name', 'ok', 'warning']);
  }, 60_000);

  it('audit: JSON Lines, one record object a line (a stream, as with --follow)', async () => {
    const prefix = uniquePrefix('json-audit');
    const log = new AuditLog(redis, keySpace(prefix).audit);
    await log.append({ type: 'event', correlationId: 'c1', target: 't', instance: 'web-1', summary: 'instance web-1 stopped' });
    await log.append({ type: 'decision', correlationId: 'c1', target: 't', instance: 'web-1', rule: 'r', summary: 'matched', matched: true });
    const res = await reflexInProcess(['audit', '--json', '--redis', redisUrl(), '--prefix', prefix], { FORCE_COLOR: '1' });
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines.map((r) => r.type)).toEqual(['event', 'decision']);
  });
});
