import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { redisUrl } from '../support/redis.js';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '../support/wait.js';
import { scrape, valueOf } from './observability-bed.js';

/**
 * A worker whose history store fails says so in /readyz (check `history`) and in
 * `reflex_history_store_up`: not ready when the store is required, ready but degraded when not;
 * ready and up again once the store works. A files store whose folder is a plain file (as a
 * mount gone wrong would leave it), real Redis, the simulator.
 */
type Check = { ok: boolean; detail: string; degraded?: true };

describe('a failing history store in /readyz', () => {
  let stack: Stack | undefined;
  let root: string | undefined;

  afterEach(async () => {
    await stack?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
    stack = root = undefined;
  });

  async function start(required: boolean): Promise<{ url: string; dir: string }> {
    mkdirSync(resolve('.tmp'), { recursive: true });
    root = mkdtempSync(join(resolve('.tmp'), 'history-ready-'));
    const dir = join(root, 'store');
    writeFileSync(dir, 'not a folder');
    stack = await startStack({
      redisUrl: redisUrl(),
      label: 'history-ready',
      config: { httpPort: await freePort(), history: { store: 'files', dir, required, shipIntervalMs: 200 } },
    });
    return { url: stack.reflex.http!.url, dir };
  }

  async function readyz(url: string): Promise<{ status: number; history: Check }> {
    const res = await fetch(`${url}/readyz`);
    return { status: res.status, history: ((await res.json()) as { checks: Record<string, Check> }).checks.history! };
  }

  async function storeRepaired(dir: string): Promise<void> {
    rmSync(dir);
    mkdirSync(dir);
  }

  it('is not ready while a required store fails, naming it, and ready once it works again', async () => {
    const { url, dir } = await start(true);
    const failing = await until('/readyz 503', async () => ((await readyz(url)).status === 503 ? readyz(url) : undefined), 10_000);
    expect(failing.history).toEqual({ ok: false, detail: expect.stringMatching(/^the files history store .*ENOTDIR.*\(history\.required: /) });
    expect(valueOf(await scrape(url), 'reflex_history_store_up')).toBe(0);

    await storeRepaired(dir);
    const ok = await until('/readyz 200', async () => ((await readyz(url)).status === 200 ? readyz(url) : undefined), 10_000);
    expect(ok.history).toEqual({ ok: true, detail: expect.stringMatching(/^the files history store answers/) });
    expect(valueOf(await scrape(url), 'reflex_history_store_up')).toBe(1);
  });

  it('stays ready but degraded while a store that is not required fails', async () => {
    const { url } = await start(false);
    const degraded = await until('the history check degraded', async () => ((await readyz(url)).history.degraded ? readyz(url) : undefined), 10_000);
    expect(degraded.status).toBe(200);
    expect(degraded.history).toEqual({
      ok: true,
      degraded: true,
      detail: expect.stringMatching(/^degraded: the files history store .*ENOTDIR.*Redis keeps the audit records meanwhile/),
    });
    expect(valueOf(await scrape(url), 'reflex_history_store_up')).toBe(0);
  });
});
