import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

const support = join(process.cwd(), 'test', 'support', 'reflex-process.ts');

/** Whether a process with this pid still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a reflex a test started', () => {
  const cleanups = cleanupsAfterEach();

  // A CI run stopped half-way, or a worker that crashed, must not leave a `reflex run` behind acting
  // on the shared beds under the next run's tests.
  it('stops by itself when the test process that started it is killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-orphan-'));
    const socket = join(dir, 'sim.sock');
    // The "test process": starts `reflex sim` through the test house's own startReflexProcess and
    // prints its pid once it listens.
    const script = join(dir, 'test-process.mts');
    writeFileSync(
      script,
      `import { startReflexProcess } from ${JSON.stringify(support)};
      const sim = startReflexProcess(['sim', '--listen', 'unix:${socket}', '--instances', '0']);
      await sim.waitForLog('listening');
      console.log('pid', sim.child.pid);
      `,
    );
    // node itself with tsx's loader: the tsx command would start node as its own child.
    const parent = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    parent.stdout.on('data', (d: Buffer) => (out += d.toString()));
    cleanups.push(async () => parent.kill('SIGKILL'));
    const pid = Number(await until('the test process names its reflex', () => /pid (\d+)/.exec(out)?.[1], 60_000));
    cleanups.push(async () => alive(pid) && process.kill(pid, 'SIGKILL'));
    expect(alive(pid)).toBe(true);
    parent.kill('SIGKILL');
    await until('the orphaned reflex to stop', () => !alive(pid), 30_000);
  }, 90_000);
});
