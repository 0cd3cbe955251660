import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { describeBed, lxdBed } from '../support/daemon-bed.js';
import { fastTimings } from '../simulator/sim-client.js';

/**
 * pylxd's own integration suite (pylxd 2.2.10's `integration/`, vendored in test/pylxd-integration,
 * the version of Debian's python3-pylxd the pylxd differential drives) runs side by side against
 * LXD 5.0.2 and the simulator, and the per-test results are compared: a test must end alike on
 * both, or be one of the differences below, each with its reason (docs/simulator.md lists them);
 * the simulator passes at least every test the daemon passes.
 */
const python = '/usr/bin/python3';
const runner = join(import.meta.dirname, '..', 'pylxd-integration', 'run.py');
const hasPylxd = spawnSync(python, ['-c', 'import pylxd'], { stdio: 'ignore' }).status === 0;
const hasBusybox = spawnSync('/bin/busybox', ['true'], { stdio: 'ignore' }).status === 0;

/**
 * Tests whose outcome on the test bed's LXD is fixed by the bed, not by the daemon: a container made
 * from pylxd's own busybox image (the host's /bin/busybox with busybox's init) does not start there
 * (`forkstart … exit status 1`: the bed's sandbox runs containers with /sbin/testinit as init). They
 * are not run on the daemon (about 40 s of the run's time); the simulator must pass them.
 */
const startsPylxdImage = [
  'test_containers.TestContainer.test_execute',
  'test_containers.TestContainer.test_execute_force_decode',
  'test_containers.TestContainer.test_execute_no_decode',
  'test_containers.TestContainer.test_execute_pipes',
  'test_containers.TestContainer.test_start_stop',
].map((t) => `integration.${t}`);

/**
 * Tests that fail on the bed's LXD by the host's nature and pass on the simulator: a new bridge
 * needs dnsmasq and a free IPv4 subnet, which the bed lacks (`Failed to check dnsmasq version`,
 * `Failed to automatically find an unused IPv4 subnet`); the simulator makes bridges as records.
 */
const hostNetworks = [
  'test_networks.TestNetwork.test_delete',
  'test_networks.TestNetwork.test_rename',
  'test_networks.TestNetwork.test_save',
  'test_networks.TestNetworks.test_all',
  'test_networks.TestNetworks.test_create_default_arguments',
  'test_networks.TestNetworks.test_create_with_parameters',
  'test_networks.TestNetworks.test_get',
].map((t) => `integration.${t}`);

interface TestResult {
  test: string;
  outcome: 'pass' | 'fail' | 'error' | 'skip' | 'not-run';
  message: string;
  seconds: number;
}

function suite(lxdDir: string, notRun: string[]): Promise<Map<string, TestResult>> {
  return new Promise((resolve, reject) => {
    // Asynchronous: the simulator answers from this process while the suite runs.
    const child = spawn(python, [runner], {
      env: { ...process.env, LXD_DIR: lxdDir, PYLXD_NOT_RUN: notRun.join(','), PYTHONWARNINGS: 'ignore' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const rows = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as TestResult);
      if (rows.length === 0) reject(new Error(`pylxd's integration suite exited ${code} with no result: ${stderr}`));
      else resolve(new Map(rows.map((r) => [r.test, r])));
    });
  });
}

if ((!hasPylxd || !hasBusybox) && process.env.REFLEX_REQUIRE_LXD !== '1') {
  describe.skip("pylxd's integration suite", () => it('needs python3-pylxd and busybox-static', () => undefined));
} else {
  await describeBed(lxdBed, "pylxd's own integration suite passes on the simulator wherever it passes on LXD 5.0.2", () => {
    let sim: RunningSimulator;
    let simDir: string;
    let results: { real: Map<string, TestResult>; sim: Map<string, TestResult> };

    beforeAll(async () => {
      if (!hasPylxd || !hasBusybox) throw new Error('python3-pylxd and busybox-static are needed (.ci/run installs them)');
      simDir = mkdtempSync(join(tmpdir(), 'reflex-pylxd-'));
      // Fast transitions, but operations kept as long as LXD keeps them (pylxd reads an exec's after it ends).
      sim = await startSimulator({ listen: [`unix:${join(simDir, 'unix.socket')}`], timings: { ...fastTimings, operationRetentionMs: 5000 } });
      const [real, onSim] = await Promise.all([suite(lxdBed.socket.replace(/\/unix\.socket$/, ''), startsPylxdImage), suite(simDir, [])]);
      results = { real, sim: onSim };
    }, 300_000);

    afterAll(async () => {
      // The suite names its containers after the test and the host (uuid1's node): a container a
      // failed test left behind would refuse the next run's create of the same name.
      const left = (await lxdBed.cli(['list', '--format', 'csv', '-c', 'n']).catch(() => ''))
        .split('\n')
        .filter((n) => /^test[a-z]+-[0-9a-f]{12}$/.test(n));
      for (const name of left) await lxdBed.cli(['delete', '--force', name]).catch(() => undefined);
      await sim?.stop();
      if (simDir) rmSync(simDir, { recursive: true, force: true });
    });

    it('runs the same tests on both', () => {
      expect([...results.sim.keys()].sort()).toEqual([...results.real.keys()].sort());
      expect(results.real.size).toBeGreaterThanOrEqual(48);
    });

    it('passes on the simulator every test that passes on LXD 5.0.2, and more', () => {
      const passed = (m: Map<string, TestResult>): string[] => [...m.values()].filter((r) => r.outcome === 'pass').map((r) => r.test);
      expect(passed(results.real).filter((t) => results.sim.get(t)?.outcome !== 'pass')).toEqual([]);
      expect(passed(results.sim).length).toBeGreaterThanOrEqual(passed(results.real).length + startsPylxdImage.length);
    });

    it('ends every test alike on both, but for the differences documented with their reason', () => {
      const differing = [...results.real.values()]
        .filter((r) => r.outcome !== 'not-run' && r.outcome !== results.sim.get(r.test)?.outcome)
        .map((r) => `${r.test}: ${r.outcome} (${r.message}) / ${results.sim.get(r.test)?.outcome} (${results.sim.get(r.test)?.message})`);
      const expected = hostNetworks.map((t) => `${t}: error`);
      expect(differing.map((d) => d.replace(/ \(.*$/, ''))).toEqual(expected);
      for (const t of hostNetworks) expect(results.sim.get(t)?.outcome).toBe('pass');
      expect(
        Object.fromEntries(startsPylxdImage.map((t) => [t, results.sim.get(t)?.outcome === 'pass' ? 'pass' : results.sim.get(t)?.message])),
      ).toEqual(Object.fromEntries(startsPylxdImage.map((t) => [t, 'pass'])));
    });
  });
}
