import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `node --import tsx chaos/run.ts <args>` from the checkout, as `npm run chaos -- <args>` does after its build. */
function chaos(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'chaos/run.ts', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** Listens on `port` of 127.0.0.1; undefined when something else holds it already (held either way). */
function holdPort(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

const known = ['fuzz', 'worker-kills', 'redis-restart', 'socket-cut', 'crash-loop', 'cluster-master-kill', 'random', 'sentinel-failover'];

describe('the chaos harness command line', () => {
  it('refuses an unknown scenario name with exit 2, naming it and the known ones, and runs nothing', async () => {
    const res = await chaos(['--short', 'no-such-scenario']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^chaos: unknown scenario: no-such-scenario; known: (.+)$/m);
    const listed = /known: (.+)$/m.exec(res.stderr)![1]!.split(', ');
    expect(listed).toEqual(known);
    expect(res.stdout).toBe('');
  });

  it('refuses a run where one of several names is unknown, before running the known ones', async () => {
    const res = await chaos(['--short', 'crash-loop', 'worker-kill']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unknown scenario: worker-kill;/);
    expect(res.stdout).not.toMatch(/crash-loop/);
  });

  it('refuses an unknown option with exit 2 and the usage', async () => {
    const res = await chaos(['--shrot']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/Unknown option '--shrot'/);
    expect(res.stderr).toMatch(/^usage: npm run chaos/m);
    expect(res.stdout).toBe('');
  });

  it('refuses a history count or seed that is not a whole number, an unknown target, and --random beside another scenario, before running anything', async () => {
    for (const args of [
      ['--random', 'many'],
      ['--random', '5', '--seed', '-1'],
      ['--random', '5', 'crash-loop'],
      ['--target', 'mars'],
    ]) {
      const res = await chaos(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(/takes a whole number|run the scenario random alone|--target is sim, lxd or incus|ambiguous|option/);
      expect(res.stdout).toBe('');
    }
  });

  it('--help prints the usage with every scenario and exits 0 without running any', async () => {
    for (const flag of ['--help', '-h']) {
      const res = await chaos([flag]);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^usage: npm run chaos -- \[--short\] \[SCENARIO…\]/);
      for (const name of known) expect(res.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
      expect(res.stdout).not.toMatch(/^chaos: /m);
    }
  });

  it('runs its reflex processes beside a Reflex holding the default port 9464, one configured by the environment', async () => {
    // A real Reflex on this host: its metrics port taken, its settings in the environment.
    const held = await holdPort(9464);
    try {
      const res = await chaos(['--short', 'crash-loop'], { REFLEX_HTTP_PORT: '9464', REFLEX_LOG_LEVEL: 'silent' });
      expect(res.stdout, res.stderr).toMatch(/^chaos: crash-loop: PASS/m);
      expect(res.stdout).toMatch(/^chaos: all 1 scenario\(s\) passed/m);
      expect(res.code).toBe(0);
    } finally {
      held?.close();
    }
  }, 150_000);
});
