import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { chainHash } from '../../src/audit/audit-chain.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { canonicalJson } from '../../src/audit/canonical-json.js';
import { FileHistoryStore } from '../../src/audit/history/file-history-store.js';
import { HistoryShipper } from '../../src/audit/history/history-shipper.js';
import { keySpace } from '../../src/redis/key-space.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';

/**
 * A segment of the embedded files history store edited the way a person would (gunzip it, change
 * its text, gzip it again, leave the manifest alone) is named by verification: the segment, the
 * line and record, and the hash the chain expects against the hash found, whatever the edit did
 * to the file's size. A segment cut short is said to be cut, with how many records were readable.
 */

const redis = redisClient();
const logger = pino({ level: 'silent' });
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  redis.disconnect();
});

interface Line {
  text: string;
  id: string;
  prev: string;
  hash: string;
}

/** A store of 49 records shipped from Redis by the real shipper in batches of 7, in several segments of several gzip members each; Redis keeps the newest. */
async function shippedStore() {
  const prefix = uniquePrefix('tamper');
  const base = mkdtempSync(join(tmpdir(), 'reflex-tamper-'));
  dirs.push(base);
  const dir = join(base, prefix);
  const key = keySpace(prefix).audit;
  const store = new FileHistoryStore(dir, { segmentMaxBytes: 600 });
  await store.open();
  const { alerts } = recordingAlerts(new AuditLog(redis, keySpace(uniquePrefix('tamper-alerts')).audit));
  const shipper = new HistoryShipper({ redis, streamKey: key, store, logger, batch: 7, intervalMs: 3_600_000, alerts });
  await shipper.start();
  await shipper.stop();
  const writer = new AuditLog(redis, key, { maxRecords: 10 });
  for (let n = 0; n < 49; n++) {
    await writer.append({ type: 'event', correlationId: `c${n}`, instance: n % 2 ? 'web-1' : 'db-1', summary: `record ${n}` });
  }
  await shipper.shipAll();
  // Ten more, not shipped: retention then trims what the store holds out of Redis, so `reflex audit` reads the store.
  for (let n = 49; n < 59; n++) await writer.append({ type: 'event', correlationId: `c${n}`, instance: 'web-1', summary: `record ${n}` });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { segments: { file: string; count: number; bytes: number }[] };
  expect(manifest.segments.length).toBeGreaterThanOrEqual(3);
  // The second segment: it has a segment before and after it, and more than one gzip member.
  const segment = manifest.segments[1]!;
  const path = join(dir, segment.file);
  expect(segment.count).toBeGreaterThan(7);
  const lines = (): Line[] =>
    gunzipSync(readFileSync(path))
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((text) => ({ text, ...(JSON.parse(text) as { id: string; prev: string; hash: string }) }));
  /** gunzip, edit the text, gzip: the natural way, the manifest untouched. */
  const edit = (change: (lines: string[]) => string[]) => {
    const text = change(lines().map((l) => l.text));
    writeFileSync(path, gzipSync(text.map((t) => `${t}\n`).join('')));
  };
  const verify = () => new AuditLog(redis, key, { history: store }).verify();
  const cli = (...args: string[]) => runReflex(['audit', ...args, '--redis', redisUrl(), '--prefix', prefix, '--history-dir', base]);
  return { store, segment, path, lines, edit, verify, cli };
}

/** The hash a line's content has now. */
function hashOf(text: string): string {
  const { id, prev, hash: _hash, ...record } = JSON.parse(text) as Record<string, unknown>;
  return chainHash(String(prev), String(id), canonicalJson(record));
}

describe('verification of a files history store edited by hand', { timeout: 60_000 }, () => {
  for (const [how, to] of [
    ['longer', (summary: string) => `${summary}, nothing happened here`],
    ['shorter', () => 'r'],
    ['the same length', (summary: string) => summary.replace(/\d/g, '0')],
  ] as const) {
    it(`names the segment, the line, the record and its expected and found hash when a value is made ${how}`, async () => {
      const s = await shippedStore();
      const i = 5;
      const before = s.lines()[i]!;
      const { summary } = JSON.parse(before.text) as { summary: string };
      s.edit((lines) => lines.map((t, j) => (j === i ? t.replace(`"summary":"${summary}"`, `"summary":"${to(summary)}"`) : t)));
      const found = hashOf(s.lines()[i]!.text);
      expect(found).not.toBe(before.hash);

      const result = await s.verify();
      expect(result).toMatchObject({ ok: false, badId: before.id });
      const reason = !result.ok ? result.reason : '';
      expect(reason).toContain(`segment ${s.segment.file}, line ${i + 1} (record ${before.id})`);
      expect(reason).toContain(`expected hash ${before.hash}, found ${found}`);
      expect(reason).toMatch(/altered/);
      expect(reason).toContain('; 1 mismatch in the store');
      expect(result).toMatchObject({ segment: s.segment.file, line: i + 1, expectedHash: before.hash, foundHash: found, mismatches: 1 });
    });
  }

  it('names the record after a removed line, with the hash it expects before it and the one it finds', async () => {
    const s = await shippedStore();
    const lines = s.lines();
    const i = 4;
    s.edit((texts) => texts.filter((_, j) => j !== i));

    const result = await s.verify();
    expect(result).toMatchObject({ ok: false, badId: lines[i + 1]!.id });
    const reason = !result.ok ? result.reason : '';
    expect(reason).toContain(`segment ${s.segment.file}, line ${i + 1} (record ${lines[i + 1]!.id})`);
    expect(reason).toContain(`expected hash ${lines[i]!.hash}, found ${lines[i - 1]!.hash}`);
    expect(reason).toMatch(/deleted/);
    expect(reason).toContain(`${s.segment.count - 1} records where its checkpoint says ${s.segment.count}`);
  });

  it("names the segment's new last record when its last line was removed, with the hash its checkpoint expects", async () => {
    const s = await shippedStore();
    const lines = s.lines();
    s.edit((texts) => texts.slice(0, -1));

    const result = await s.verify();
    const last = lines.at(-2)!;
    expect(result).toMatchObject({ ok: false, badId: last.id });
    const reason = !result.ok ? result.reason : '';
    expect(reason).toContain(`segment ${s.segment.file}, line ${lines.length - 1} (record ${last.id})`);
    expect(reason).toContain(`expected hash ${lines.at(-1)!.hash}, found ${last.hash}`);
    expect(reason).toMatch(/records after it were deleted/);
  });

  it('names a duplicated line as a copy of the record before it', async () => {
    const s = await shippedStore();
    const lines = s.lines();
    const i = 3;
    s.edit((texts) => [...texts.slice(0, i + 1), texts[i]!, ...texts.slice(i + 1)]);

    const result = await s.verify();
    expect(result).toMatchObject({ ok: false, badId: lines[i]!.id });
    const reason = !result.ok ? result.reason : '';
    expect(reason).toContain(`segment ${s.segment.file}, line ${i + 2} (record ${lines[i]!.id})`);
    expect(reason).toMatch(/duplicated/);
    // As for any broken link: the hash its prev names for the record before it, and the hash of the line before it.
    expect(reason).toContain(`expected hash ${lines[i - 1]!.hash}, found ${lines[i]!.hash}`);
    expect(reason).toContain(`${s.segment.count + 1} records where its checkpoint says ${s.segment.count}`);
  });

  it('counts every altered record and names the first', async () => {
    const s = await shippedStore();
    const lines = s.lines();
    s.edit((texts) => texts.map((t, j) => (j === 2 || j === 5 ? t.replace('"type":"event"', '"type":"alert"') : t)));

    const result = await s.verify();
    expect(result).toMatchObject({ ok: false, badId: lines[2]!.id });
    const reason = !result.ok ? result.reason : '';
    expect(reason).toContain(`line 3 (record ${lines[2]!.id})`);
    expect(reason).toContain('; 2 mismatches in the store');
  });

  it('says a segment whose gzip stream was cut is cut, and how many of its records were readable', async () => {
    const s = await shippedStore();
    const whole = readFileSync(s.path);
    const cut = whole.subarray(0, Math.floor(whole.length * 0.6));
    writeFileSync(s.path, cut);
    // What a reader gets from the cut file: the complete lines before the stream ends.
    const readable = gunzipSync(cut, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8').split('\n').slice(0, -1);
    expect(readable.length).toBeGreaterThan(0);
    expect(readable.length).toBeLessThan(s.segment.count);
    const last = JSON.parse(readable.at(-1)!) as { id: string };

    const result = await s.verify();
    expect(result).toMatchObject({ ok: false, badId: last.id });
    const reason = !result.ok ? result.reason : '';
    expect(reason).toContain(`segment ${s.segment.file} is cut`);
    expect(reason).toContain(`${readable.length} of its ${s.segment.count} records were readable`);
    expect(reason).toContain(`${cut.length} bytes`);
  });

  it('says a segment compressed again without an edit was rewritten outside the store, though its records match', async () => {
    const s = await shippedStore();
    const lines = s.lines();
    s.edit((texts) => texts);

    const result = await s.verify();
    expect(result).toMatchObject({ ok: false, badId: lines[0]!.id, mismatches: 1 });
    const reason = !result.ok ? result.reason : '';
    expect(reason).toContain(`segment ${s.segment.file}: it was rewritten outside the store`);
    expect(reason).toContain('each of its records matches its hash and chain');
  });

  it('says a segment file deleted behind the manifest is missing, with the records its checkpoint held', async () => {
    const s = await shippedStore();
    const lines = s.lines();
    rmSync(s.path);

    const result = await s.verify();
    expect(result).toMatchObject({ ok: false, badId: lines[0]!.id, segment: s.segment.file });
    const reason = !result.ok ? result.reason : '';
    expect(reason).toContain(`segment ${s.segment.file}: it is missing: it was deleted`);
    expect(reason).toContain(`held ${s.segment.count} records, ${lines[0]!.id} to ${lines.at(-1)!.id}`);
  });

  it('reports an edited segment through `reflex audit verify`, and `reflex audit` names the segment it cannot read', async () => {
    const s = await shippedStore();
    const i = 5;
    const before = s.lines()[i]!;
    s.edit((lines) => lines.map((t, j) => (j === i ? t.replace('"summary":"record', '"summary":"edited record') : t)));

    const res = await s.cli('verify');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`audit chain broken at record ${before.id}`);
    expect(res.stderr).toContain(`segment ${s.segment.file}, line ${i + 1}`);
    expect(res.stderr).toContain(`expected hash ${before.hash}, found ${hashOf(s.lines()[i]!.text)}`);

    const listed = await s.cli('--json');
    expect(listed.code).not.toBe(0);
    expect(listed.stderr).toContain(`history segment ${s.segment.file}`);
    expect(listed.stderr).toContain('reflex audit verify names where');
  });
});
