import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chainHash } from '../../src/audit/audit-chain.js';
import { canonicalJson } from '../../src/audit/canonical-json.js';
import { FileHistoryStore } from '../../src/audit/history/file-history-store.js';
import type { HistoryEntry } from '../../src/audit/history/history-store.js';
import { parseConfig } from '../../src/config/config.js';
import { defaultHistoryDir } from '../../src/config/history-dir.js';

/**
 * The files history store is the default, so it is bounded: past `maxBytes` or `maxAgeMs` its
 * oldest segments go when a new one starts, never the newest, and what stays still verifies. With
 * no `history.dir`, it lives in the state folder of the process (systemd's, the user's), never in
 * a system folder a developer's run could not write.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(resolve('.tmp'), 'history-bounds-'));
  dirs.push(d);
  return d;
}

/** `count` chained entries dated from `fromMs`, one ms apart, each with `padding` bytes of summary (they compress poorly when random). */
function chain(count: number, fromMs: number, prev = '', padding = 400): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (let i = 0; i < count; i++) {
    const summary = Array.from({ length: padding }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)]).join('');
    const id = `${fromMs + i}-0`;
    const json = canonicalJson({ type: 'event', summary });
    const hash = chainHash(prev, id, json);
    out.push({ id, json, prev, hash });
    prev = hash;
  }
  return out;
}

const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.ndjson.gz'));

describe('the files history store within its bounds', () => {
  it('deletes the oldest segments past maxBytes when a new one starts, and keeps the newest', async () => {
    const dir = freshDir();
    const store = new FileHistoryStore(dir, { segmentMaxBytes: 4096, maxBytes: 3 * 4096 });
    await store.open();
    const entries = chain(200, 1_000_000);
    for (let i = 0; i < entries.length; i += 10) await store.append(entries.slice(i, i + 10));
    const kept = segments(dir);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThanOrEqual(4);
    expect(kept).not.toContain(`audit-1000000-0.ndjson.gz`);
    expect(await store.head()).toEqual({ id: entries.at(-1)!.id, hash: entries.at(-1)!.hash });
    const verified = await store.verify();
    expect(verified).toMatchObject({ ok: true, headId: entries.at(-1)!.id });
    expect(verified.records).toBeLessThan(200);
    const read: string[] = [];
    for await (const e of store.entries({ start: '-', end: '+' })) read.push(e.id);
    expect(read).toEqual(entries.slice(200 - read.length).map((e) => e.id));
  });

  it('deletes segments whose newest record is older than maxAgeMs, never the newest one, whatever its age', async () => {
    const dir = freshDir();
    const day = 24 * 3600_000;
    const now = 400 * day;
    const store = new FileHistoryStore(dir, { segmentMaxBytes: 4096, maxAgeMs: 30 * day, now: () => now });
    await store.open();
    const old = chain(40, now - 100 * day);
    const recent = chain(40, now - day, old.at(-1)!.hash);
    for (let i = 0; i < old.length; i += 10) await store.append(old.slice(i, i + 10));
    expect(segments(dir).length, 'a store of old records alone keeps its newest segment').toBeGreaterThanOrEqual(1);
    for (let i = 0; i < recent.length; i += 10) await store.append(recent.slice(i, i + 10));
    const ids: string[] = [];
    for await (const e of store.entries({ start: '-', end: '+' })) ids.push(e.id);
    expect(ids.filter((id) => old.some((e) => e.id === id)).length).toBeLessThanOrEqual(10);
    expect(ids.slice(-40)).toEqual(recent.map((e) => e.id));
    expect(await store.verify()).toMatchObject({ ok: true });
  });

  it('is the default store, in the state folder of the process', () => {
    const none = () => false;
    expect(parseConfig({}).history).toMatchObject({ store: 'files', maxBytes: 1024 ** 3, maxAgeMs: 365 * 24 * 3600_000 });
    expect(defaultHistoryDir({ STATE_DIRECTORY: '/var/lib/reflex' }, none)).toBe('/var/lib/reflex/history');
    expect(defaultHistoryDir({ XDG_STATE_HOME: '/home/dev/.state' }, none)).toBe('/home/dev/.state/reflex/history');
    expect(defaultHistoryDir({}, (p) => p === '/var/lib/reflex')).toBe('/var/lib/reflex/history');
    expect(defaultHistoryDir({}, none)).toBe(join(homedir(), '.local', 'state', 'reflex', 'history'));
    // The test run's own: under .tmp/, set by the global set-up.
    expect(parseConfig({}).history.dir.startsWith(resolve('.tmp'))).toBe(true);
    expect(existsSync('/var/lib/reflex/history')).toBe(false);
  });
});
