import { acquireDaemonLock, describeBed, lxdBed } from './daemon-bed.js';

/**
 * The LXD bed (test/support/daemon-bed.ts) under the names LXD-only suites and the benchmarks use:
 * `lxc(…)` reads better than `lxdBed.cli(…)` where the daemon is LXD and nothing else.
 */

export { STATUS_RUNNING, STATUS_STOPPED, TEST_INSTANCE_PREFIX, lxdSocketPath } from './daemon-bed.js';

/** Takes the LXD daemon's lock (test/support/daemon-bed.ts), as the LXD suites hold it. */
export const acquireLxdLock = () => acquireDaemonLock('lxd');

/** Runs `lxc` against the LXD socket; returns stdout, rejects with lxc's stderr. */
export const lxc = lxdBed.cli;
export const launchTestInstance = lxdBed.launch;
export const instanceStatus = lxdBed.status;
export const waitForStatus = lxdBed.waitForStatus;
export const crashInstance = lxdBed.crash;
export const startInstance = lxdBed.start;
export const deleteTestInstance = lxdBed.remove;
export const lxdReachable = lxdBed.reachable;
export const requireLxd = lxdBed.required;

/** A suite on real LXD only (see describeBed); await it at the top level of a test file. */
export const describeLxd = (name: string, body: () => void): Promise<void> => describeBed(lxdBed, name, body);
