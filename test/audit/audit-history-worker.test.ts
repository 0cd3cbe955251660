import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chainKey } from '../../src/audit/audit-chain.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { compareIds } from '../../src/audit/audit-verifier.js';
import { FileHistoryStore } from '../../src/audit/history/file-history-store.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startReflexBed } from '../actions/reflex-bed.js';
import { until } from '../support/wait.js';
import { redisClient } from '../support/redis.js';

const restart = `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({ name: 'restart', on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] }, actions: [{ action: 'start' }] });
`;

const redis = redisClient();
const dir = mkdtempSync(join(tmpdir(), 'reflex-history-'));
afterAll(() => {
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('a worker with a history store', { timeout: 60_000 }, () => {
  it('ships the audit records of a healed crash to the store, and the trail verifies across it', async () => {
    const bed = await startReflexBed({ 'restart.ts': restart }, { typecheckRules: false, history: { store: 'files', dir, shipIntervalMs: 100 } });
    try {
      bed.sim.controls.addInstance({ name: 'web-1', status: 'Running' });
      bed.sim.controls.crash('web-1');
      const key = keySpace(bed.prefix).audit;
      const store = new FileHistoryStore(join(dir, bed.prefix));
      await until(
        'an outcome record shipped to the store',
        async () => {
          const head = await store.head();
          const outcome = (await new AuditLog(redis, key).read({ type: 'outcome' }))[0];
          return head !== undefined && outcome !== undefined && compareIds(head.id, outcome.id) >= 0;
        },
        30_000,
      );
      expect(await redis.hget(chainKey(key), 'shipped-id')).not.toBe('0-0');
      const result = await new AuditLog(redis, key, { history: store }).verify();
      expect(result.ok).toBe(true);
      expect(result.ok && 'store' in result && result.store?.records).toBeGreaterThan(0);
    } finally {
      await bed.stop();
    }
  });
});
