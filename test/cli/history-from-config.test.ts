import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { FileHistoryStore } from '../../src/audit/history/file-history-store.js';
import { HistoryShipper } from '../../src/audit/history/history-shipper.js';
import { resolveConfig } from '../../src/cli/config-options.js';
import { keySpace } from '../../src/redis/key-space.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { reflexInProcess } from './in-process.js';

/**
 * Every command reads the configuration `reflex run` reads: on a packaged install the history
 * settings live in /etc/reflex/config.yaml, so `reflex audit` from a plain shell (no REDIS_URL,
 * REFLEX_PREFIX or REFLEX_HISTORY_* in its environment) shows what the service shipped to its
 * history store; a command that reads no store says so in one line instead of answering short.
 */
const redis = redisClient();
const dir = mkdtempSync(join(resolve('.tmp'), 'history-config-'));
afterAll(() => {
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** An operator's shell: none of the variables the unit or a developer may set. */
const plainShell = { REDIS_URL: '', REFLEX_PREFIX: '', REFLEX_CONFIG: '', REFLEX_HISTORY_STORE: '', REFLEX_HISTORY_DIR: '' };

function configFile(name: string, settings: Record<string, unknown>): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ redisUrl: redisUrl(), ...settings }));
  return file;
}

/** `count` records about `instance` shipped to a files store in `historyDir`, then trimmed out of Redis by later records. */
async function shippedAndTrimmed(prefix: string, historyDir: string, instance: string, count: number): Promise<string[]> {
  const key = keySpace(prefix).audit;
  const store = new FileHistoryStore(join(historyDir, prefix));
  await store.open();
  const { alerts } = recordingAlerts(new AuditLog(redis, keySpace(uniquePrefix('history-alerts')).audit));
  const shipper = new HistoryShipper({ redis, streamKey: key, store, logger: pino({ level: 'silent' }), intervalMs: 3_600_000, alerts });
  await shipper.start();
  await shipper.stop();
  const writer = new AuditLog(redis, key, { maxRecords: 5 });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await writer.append({ type: 'event', correlationId: `c${i}`, instance, summary: `record ${i}` }));
  await shipper.shipAll();
  for (let i = 0; i < 30; i++) await writer.append({ type: 'event', correlationId: `d${i}`, instance: 'db-1', summary: `later ${i}` });
  const inRedis = (await redis.xrange(key, '-', '+')).map(([id]) => id);
  expect(
    inRedis.filter((id) => ids.includes(id)),
    'the records are only in the store',
  ).toEqual([]);
  return ids;
}

describe('one configuration for every command', () => {
  it('reflex audit --instance with only --config shows the records the files history store holds', async () => {
    const prefix = uniquePrefix('hist-config');
    const historyDir = join(dir, 'history');
    const ids = await shippedAndTrimmed(prefix, historyDir, 'web-7', 7);
    const file = configFile('packaged.json', { prefix, history: { store: 'files', dir: historyDir } });

    const listed = await reflexInProcess(['audit', '--instance', 'web-7', '--json', '--config', file], plainShell);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const shown = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; instance: string });
    expect(shown.map((r) => r.id)).toEqual(ids);

    const verified = await reflexInProcess(['audit', 'verify', '--config', file], plainShell);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^verified 37 records .*; 7 of them in the files history store/);
  });

  it('reflex audit with no history store says in one line that only Redis is shown', async () => {
    const prefix = uniquePrefix('hist-none');
    await new AuditLog(redis, keySpace(prefix).audit).append({ type: 'event', correlationId: 'c', instance: 'web-1', summary: 'only in Redis' });
    const none = await reflexInProcess(['audit', '--config', configFile('none.json', { prefix, history: { store: 'none' } })], plainShell);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('only in Redis');
    expect(none.stderr).toMatch(
      /^reflex: history\.store is none: only the audit records Redis still holds are shown \(set history in \S+none\.json to read more\)\n$/,
    );

    // A files store whose folder is not on this host (another user's default, a typo): said too, not an empty answer.
    const elsewhere = configFile('elsewhere.json', { prefix, history: { store: 'files', dir: join(dir, 'nowhere') } });
    const missing = await reflexInProcess(['audit', '--last', '1', '--config', elsewhere], plainShell);
    expect(missing.code).toBe(0);
    expect(missing.stderr).toMatch(/^reflex: no files history store at \S+nowhere\S+: only the audit records Redis still holds are shown[^\n]*\n$/);
  });

  it("reads a relative history.dir in the config file from the file's folder, wherever the command runs, as the service does", () => {
    const file = configFile('relative.json', { history: { dir: 'audit-history', maxBytes: 1000 } });
    expect(resolveConfig({ config: file }).history).toMatchObject({ store: 'files', dir: join(dir, 'audit-history'), maxBytes: 1000 });
    // The environment and flags change fields of the section, not the whole section; theirs are relative to where they are given.
    expect(resolveConfig({ config: file, history: 'none' }).history).toMatchObject({ store: 'none', maxBytes: 1000 });
    expect(resolveConfig({ config: file, historyDir: 'here' }).history).toMatchObject({ store: 'files', dir: 'here', maxBytes: 1000 });
    expect(() => resolveConfig({ config: configFile('bad.json', { history: 'files' }) })).toThrow(/history: .*\(got "files"\)/);
  });

  it('the packaged config file names the history store, and the unit leaves it to that file', () => {
    expect(resolveConfig({ config: 'deploy/config.yaml' }).history).toMatchObject({
      store: 'files',
      dir: '/var/lib/reflex/history',
      maxBytes: 1024 ** 3,
      maxAgeMs: 365 * 24 * 3600_000,
    });
    expect(readFileSync('deploy/reflex.service', 'utf8')).not.toMatch(/^Environment=.*REFLEX_HISTORY/m);
  });
});

describe('every command that reads Redis', () => {
  const commands = [
    ['audit'],
    ['audit', 'verify'],
    ['audit', 'export'],
    ['replay', '--rules', 'rules'],
    ['silence', 'list'],
    ['alerts', '--rules', 'rules'],
    ['quarantine', 'list'],
    ['dlq', 'list'],
    ['probes', 'status'],
    ['housekeeping', 'plan', '--rules', 'rules'],
  ];
  it.each(commands)('reflex %s %s takes Redis from the config file, as reflex run does', async (...args: string[]) => {
    const file = configFile('unreachable.json', { redisUrl: 'redis://127.0.0.1:1', prefix: 'from-the-file' });
    const res = await reflexInProcess([...args, '--config', file], plainShell);
    expect(res.stderr).toMatch(
      /^(reflex: history\.store is none[^\n]*\n|reflex: no files history store[^\n]*\n)?reflex: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 /,
    );
    expect(res.code).toBe(4);
  });
});
