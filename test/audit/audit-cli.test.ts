import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess } from '../support/reflex-process.js';
import { clockPast, until } from '../support/wait.js';

const redis = redisClient();
afterAll(() => redis.disconnect());

function setup() {
  const prefix = uniquePrefix('audit');
  const log = new AuditLog(redis, keySpace(prefix).audit);
  const reflex = (...args: string[]) => runReflex(['audit', ...args, '--redis', redisUrl(), '--prefix', prefix]);
  const lines = (stdout: string) =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { prefix, log, reflex, lines };
}

describe('reflex audit', { timeout: 60_000 }, () => {
  it('prints one JSON record a line, oldest first, with its id, for one instance', async () => {
    const { log, reflex, lines } = setup();
    const a = await log.append({ type: 'event', correlationId: 'c1', target: 't', instance: 'web1', summary: 'instance web1 stopped' });
    await log.append({ type: 'event', correlationId: 'c2', target: 't', instance: 'db1', summary: 'instance db1 stopped' });
    const b = await log.append({
      type: 'decision',
      correlationId: 'c1',
      target: 't',
      instance: 'web1',
      rule: 'restart-on-crash',
      summary: 'matched',
      matched: true,
    });
    const res = await reflex('--json', '--instance', 'web1');
    expect(res.code).toBe(0);
    const out = lines(res.stdout);
    expect(out.map((r) => r.id)).toEqual([a, b]);
    expect(out[1]).toMatchObject({
      type: 'decision',
      correlationId: 'c1',
      instance: 'web1',
      rule: 'restart-on-crash',
      summary: 'matched',
      matched: true,
    });
    expect(typeof out[1]!.at).toBe('string');
  });

  it('filters by rule, type and time, reading only the time range asked for', async () => {
    const { log, reflex, lines } = setup();
    await log.append({ type: 'decision', correlationId: 'c', instance: 'web1', rule: 'a', summary: 'old a' });
    // Records either side of the cut must differ in time (their ids are Redis's clock, in ms): only time passing does that.
    const cut = new Date(await clockPast(Date.now())).toISOString();
    await clockPast(Date.parse(cut));
    await log.append({ type: 'decision', correlationId: 'c', instance: 'web1', rule: 'a', summary: 'new a' });
    await log.append({ type: 'decision', correlationId: 'c', instance: 'web1', rule: 'b', summary: 'new b' });
    await log.append({ type: 'action', correlationId: 'c', instance: 'web1', rule: 'a', summary: 'queued restart' });
    const summaries = async (q: Parameters<AuditLog['read']>[0]) => (await log.read(q)).map((r) => r.summary);
    expect(await summaries({ since: new Date(cut) })).toEqual(['new a', 'new b', 'queued restart']);
    expect(await summaries({ rule: 'a', type: 'decision' })).toEqual(['old a', 'new a']);
    expect(await summaries({ until: new Date(cut) })).toEqual(['old a']);
    expect(await summaries({ type: ['action', 'decision'], count: 2 })).toEqual(['new b', 'queued restart']);
    const res = await reflex('--json', '--since', cut, '--rule', 'a', '--type', 'decision,action');
    expect(lines(res.stdout).map((r) => r.summary)).toEqual(['new a', 'queued restart']);
    const bad = await reflex('--since', 'yesterday');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('duration');
  });

  // The waits bound how long a failure takes to show: a CLI process starting on a loaded CI machine took over 10 s.
  it('follows the log, printing a record appended after it started, until interrupted', { timeout: 180_000 }, async () => {
    const { prefix, log } = setup();
    await log.append({ type: 'event', correlationId: 'c', instance: 'web1', summary: 'before' });
    const p = startReflexProcess(['audit', '--follow', '--json', '--instance', 'web1', '--redis', redisUrl(), '--prefix', prefix]);
    try {
      const seen = (summary: string) => until(`${summary} printed`, () => p.logs.some((l) => l.summary === summary), 60_000, 100);
      expect(await seen('before')).toBe(true);
      await log.append({ type: 'event', correlationId: 'c', instance: 'db1', summary: 'other instance' });
      await log.append({ type: 'call', correlationId: 'c', instance: 'web1', summary: 'after' });
      expect(await seen('after')).toBe(true);
      expect(p.logs.map((l) => l.summary)).toEqual(['before', 'after']);
      const exited = new Promise<number | null>((r) => p.child.once('exit', r));
      p.child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      await p.kill();
    }
  });

  it('verifies the chain, and names the record altered in Redis with exit code 1', async () => {
    const { prefix, log, reflex } = setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await log.append({ type: 'event', correlationId: 'c', summary: `record ${i}` }));
    const ok = await reflex('verify');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^verified 5 records/);

    const key = keySpace(prefix).audit;
    const tmp = `${key}:tampered`;
    for (const [id, f] of await redis.xrange(key, '-', '+')) {
      const fields = id === ids[2] ? f.map((v) => v.replace('record 2', 'record 2, nothing to see')) : f;
      await redis.xadd(tmp, id, ...fields);
    }
    await redis.rename(tmp, key);
    const bad = await reflex('verify');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`audit chain broken at record ${ids[2]}`);
    expect(bad.stderr).toContain('does not match its hash');
  });

  it('exports JSONL with chain fields that verifies on its own', async () => {
    const { log, reflex, lines } = setup();
    for (let i = 0; i < 4; i++)
      await log.append({ type: 'outcome', correlationId: 'c', instance: 'web1', summary: `done ${i}`, result: 'done', nested: { b: 1, a: [1, 2] } });
    const dir = await mkdtemp(join(tmpdir(), 'reflex-audit-'));
    const file = join(dir, 'audit.jsonl');
    const res = await reflex('export', '--out', file);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`exported 4 records to ${file}`);
    const exported = lines(await readFile(file, 'utf8'));
    expect(exported).toHaveLength(4);
    expect(exported[0]).toMatchObject({ summary: 'done 0', prev: '0'.repeat(40) });
    expect(exported[1]!.prev).toBe(exported[0]!.hash);

    const toStdout = await reflex('export');
    expect(toStdout.stdout).toBe(await readFile(file, 'utf8'));
    expect((await runReflex(['audit', 'verify', '--file', file])).stdout).toMatch(/^verified 4 records/);

    const edited = (await readFile(file, 'utf8')).replace('done 1', 'failed 1');
    const editedFile = join(dir, 'edited.jsonl');
    await writeFile(editedFile, edited);
    const bad = await runReflex(['audit', 'verify', '--file', editedFile]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`record ${exported[1]!.id}`);
  });

  it("shows an instance's records under its former and its new name: history follows the uuid, not the name", async () => {
    const { log, reflex, lines } = setup();
    const U1 = '6a1e3f0e-0000-4000-8000-000000000001';
    const U2 = '6a1e3f0e-0000-4000-8000-000000000002';
    /** The decision of incident `correlationId` on `instance`, whose uuid is `uuid`: rule r matched. */
    const matched = (correlationId: string, instance: string, uuid: string) =>
      log.append({ type: 'decision', correlationId, target: 't', instance, rule: 'r', summary: 'matched', matched: true, uuid });
    // web1 crashes; the operator renames it web1-old, where it crashes again; a new web1 is made.
    await log.append({ type: 'event', correlationId: 'c1', target: 't', instance: 'web1', summary: 'web1: 103 → 102 (unrequested)' });
    await matched('c1', 'web1', U1);
    await log.append({ type: 'event', correlationId: 'c2', target: 't', instance: 'web1-old', summary: 'web1-old: 103 → 102 (unrequested)' });
    await matched('c2', 'web1-old', U1);
    await matched('c3', 'web1', U2);
    await matched('c4', 'db1', '6a1e3f0e-0000-4000-8000-000000000003');
    const of = async (name: string) =>
      lines((await reflex('--json', '--instance', name)).stdout).map((r) => `${r.correlationId as string} ${r.instance as string}`);
    expect(await of('web1')).toEqual(['c1 web1', 'c1 web1', 'c2 web1-old', 'c2 web1-old', 'c3 web1']);
    expect(await of('web1-old')).toEqual(['c1 web1', 'c1 web1', 'c2 web1-old', 'c2 web1-old']);
    expect(await of('db1')).toEqual(['c4 db1']);
  });
});
