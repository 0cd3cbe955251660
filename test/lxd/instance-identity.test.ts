import { crashInstance, describeLxd, lxc, lxdSocketPath } from '../support/lxd-bed.js';
import { identityScenarios } from '../remediation/identity-scenarios.js';

/** Issue 25 on real LXD 5.0.2: a delayed restart acts on the instance that crashed, not on its name. */
await describeLxd('the instance that had the incident, not its name, on real LXD', () => {
  identityScenarios({ cli: lxc, socket: lxdSocketPath() ?? '/var/lib/lxd/unix.socket', crash: crashInstance });
});
