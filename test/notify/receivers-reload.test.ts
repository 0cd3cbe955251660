import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { Notifier } from '../../src/notify/notifier.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { loadRuleSet, notifierPart, RuleSet } from '../../src/rules/rule-set.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { rulesFolder, startRule } from '../rules/support/reload-bed.js';

const receivers = (file: string, names: string[]) => `import { defineNotifications } from 'reflex-lxd';
export default defineNotifications({
  receivers: [${names.map((n) => `{ kind: 'slack', name: '${n}', urlFile: '${file}' }`).join(', ')}],
  route: { receiver: '${names[0]}' },
});
`;

describe('a rules reload and the notification receivers', () => {
  let redis: RedisConnection | undefined;
  let notifier: Notifier | undefined;
  afterEach(async () => {
    await notifier?.close();
    notifier = undefined;
    redis?.disconnect();
  });

  it('re-reads a rotated secret file, takes added receivers, and refuses a receiver whose secret cannot be read (the running ones stay)', async () => {
    const secrets = mkdtempSync(join(tmpdir(), 'reload-secret-'));
    const url = join(secrets, 'slack-url');
    writeFileSync(url, 'https://hooks.example/services/OLD-TOKEN\n');
    const folder = rulesFolder({ 'heal.ts': startRule('heal'), 'receivers.ts': receivers(url, ['ops']) });
    redis = redisClient();
    const prefix = uniquePrefix('recv');
    const audit = new AuditLog(redis, keySpace(prefix).audit);
    const initial = await loadRuleSet({ dir: folder.dir });
    notifier = new Notifier({ ...initial.notify!.settings, redis, audit, prefix, workers: false });
    const ruleSet = new RuleSet(initial, { dir: folder.dir, audit, logger: pino({ level: 'silent' }), replica: 'test' });
    ruleSet.attach(notifierPart(notifier));
    const urlOf = (name: string) => (notifier!.receivers.get(name) as unknown as { url: { reveal(): string } }).url.reveal();
    expect(urlOf('ops')).toBe('https://hooks.example/services/OLD-TOKEN');

    writeFileSync(url, 'https://hooks.example/services/NEW-TOKEN\n');
    folder.write({ 'receivers.ts': receivers(url, ['ops', 'ops-2']) });
    const taken = await ruleSet.reload({ by: 'cli' });
    expect(taken).toMatchObject({ result: 'reloaded', receivers: 2, changes: { receivers: { added: ['ops-2'], removed: [] } } });
    expect(urlOf('ops')).toBe('https://hooks.example/services/NEW-TOKEN');
    expect([...notifier.receivers.keys()]).toEqual(['ops', 'ops-2']);

    const gone = join(secrets, 'missing');
    folder.write({ 'receivers.ts': receivers(gone, ['ops']) });
    const refused = await ruleSet.reload({ by: 'cli' });
    expect(refused.result).toBe('refused');
    expect(refused.summary).toContain(`cannot read secret file ${gone}`);
    expect([...notifier.receivers.keys()]).toEqual(['ops', 'ops-2']);
    expect(ruleSet.current.generation).toBe(2);

    folder.write({ 'receivers.ts': undefined });
    expect((await ruleSet.reload({ by: 'cli' })).summary).toMatch(
      /no notification receiver is defined any more but this process started with some: restart it/,
    );
    rmSync(secrets, { recursive: true, force: true });
  }, 60_000);
});
