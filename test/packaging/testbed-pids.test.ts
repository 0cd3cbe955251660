import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { processStart } from '../support/daemon-bed.js';

const run = promisify(execFile);

/** Runs `source scripts/testbed-process.sh; CALL` and says whether CALL succeeded. */
async function holds(call: string): Promise<boolean> {
  try {
    await run('bash', ['-c', `source scripts/testbed-process.sh; ${call}`]);
    return true;
  } catch {
    return false;
  }
}

const children: ChildProcess[] = [];
/** A long `sleep`, run with the given argv[0]. */
function sleeper(argv0 = 'sleep'): number {
  const child = spawn('bash', ['-c', `exec -a ${argv0} sleep 600`], { stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}
async function argv0Is(pid: number, argv0: string): Promise<void> {
  for (let i = 0; i < 200 && !(await holds(`process_argv0_is ${pid} ${argv0}`)); i++) await new Promise((r) => setTimeout(r, 10));
}

let dir: string | undefined;
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

// A CI run starts on a machine whose processes were killed, with the test beds' pid files and
// locks still on disk; pid_max is 32 768 there, so by the time a bed starts, a pid file often
// names some other process. The cluster bed took such a stranger for member m1, waited 60 s on
// it, and every cluster suite failed "no daemon answers".
describe('the test beds tell their own processes from a stranger that reuses a pid', () => {
  it('takes a pid for a cluster member only when the process runs as that member', async () => {
    const stranger = sleeper();
    const member = sleeper('lxd-cluster-m1');
    await argv0Is(member, 'lxd-cluster-m1');
    expect(await holds(`process_argv0_is ${stranger} lxd-cluster-m1`)).toBe(false);
    expect(await holds(`process_argv0_is ${member} lxd-cluster-m1`)).toBe(true);
    expect(await holds(`process_argv0_is ${member} lxd-cluster-m2`)).toBe(false);
    expect(await holds('process_argv0_is 999999999 lxd-cluster-m1')).toBe(false);
  });

  it("takes a test run's lock for held only while the process that wrote it runs, not a later one with its pid", async () => {
    const holder = sleeper();
    await argv0Is(holder, 'sleep');
    const start = processStart(holder);
    expect(start).toMatch(/^\d+$/);
    mkdirSync(resolve('.tmp'), { recursive: true });
    dir = mkdtempSync(join(resolve('.tmp'), 'testbed-lock-'));
    const lock = join(dir, 'lock');

    writeFileSync(lock, `${holder} host token ${start}`);
    expect(await holds(`lock_holder_alive ${lock}`)).toBe(true);
    // The same pid, started at another time: a stranger.
    writeFileSync(lock, `${holder} host token ${Number(start) - 1}`);
    expect(await holds(`lock_holder_alive ${lock}`)).toBe(false);
    writeFileSync(lock, `999999999 host token ${start}`);
    expect(await holds(`lock_holder_alive ${lock}`)).toBe(false);
    expect(await holds(`lock_holder_alive ${join(dir, 'missing')}`)).toBe(false);
  });

  it('says a killed process has no start time once it is gone or a zombie', async () => {
    const pid = sleeper();
    expect(processStart(pid)).toBeDefined();
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 200 && processStart(pid) !== undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(processStart(pid)).toBeUndefined();
  });
});
