import { sync, SimHttpError } from '../envelope.js';
import type { Router } from '../router.js';

/** What a standalone host answers besides instances: cluster endpoints as a server that is not clustered, and an empty warning list. */
export function registerHost(router: Router): void {
  router.on('GET', '/1.0/cluster', () => sync({ server_name: '', enabled: false, member_config: [] }));
  router.on('GET', '/1.0/cluster/members', () => {
    throw new SimHttpError(500, 'Server is not clustered');
  });
  router.on('GET', '/1.0/cluster/members/:member', () => {
    throw new SimHttpError(500, 'Server is not clustered');
  });
  router.on('GET', '/1.0/warnings', () => sync([]));
}
