import { INCUS_SOCKET, crashIncusInstance, describeIncus, incus } from '../support/incus-bed.js';
import { identityScenarios } from '../remediation/identity-scenarios.js';

/** Issue 25 on real Incus 6.0: a delayed restart acts on the instance that crashed, not on its name. */
await describeIncus('the instance that had the incident, not its name, on real Incus', () => {
  identityScenarios({ cli: incus, socket: INCUS_SOCKET, crash: crashIncusInstance });
});
