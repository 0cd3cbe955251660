import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileHistoryStore } from '../../src/audit/history/file-history-store.js';
import { HistoryHealth } from '../../src/audit/history/history-health.js';

/**
 * The history store's health for /readyz reads the store and remembers how the last shipment went:
 * a files store that still reads but refuses a write (its next segment cannot be created) is down
 * until a write succeeds again, though a read alone would call it up.
 */
describe('the health of a history store that reads but refuses writes', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = undefined;
  });

  it('is down after a refused write and up after the next write that succeeds', async () => {
    mkdirSync(resolve('.tmp'), { recursive: true });
    root = mkdtempSync(join(resolve('.tmp'), 'history-health-'));
    const store = new FileHistoryStore(root);
    const verdicts: boolean[] = [];
    const health = new HistoryHealth(store, { onVerdict: (v) => verdicts.push(v.up) });
    const shipped = health.observed();
    await shipped.open();
    expect(await health.check()).toEqual({ up: true, detail: 'the files history store answers (newest record none yet)' });

    // The segment the write would create is taken by a folder: the write fails, reads still work.
    const entry = { id: '1-0', json: JSON.stringify({ type: 'event', summary: 'x' }), prev: '', hash: 'h1' };
    mkdirSync(join(root, 'audit-1-0.ndjson.gz'));
    await expect(shipped.append([entry])).rejects.toThrow();
    expect(await store.head()).toBeUndefined();
    expect(await health.check()).toEqual({
      up: false,
      detail: expect.stringMatching(/^the files history store refused the last records shipped to it: .*EISDIR/),
    });

    rmSync(join(root, 'audit-1-0.ndjson.gz'), { recursive: true });
    await shipped.append([entry]);
    expect(await health.check()).toEqual({ up: true, detail: 'the files history store answers (newest record 1-0)' });
    expect(verdicts).toEqual([true, false, true]);
    // What the proxy does not watch passes through: the shipper's store is the store.
    expect(shipped.kind).toBe('files');
    expect(await shipped.head()).toEqual({ id: '1-0', hash: 'h1' });
  });
});
