import { z } from 'zod';
import { parseMetadata } from './envelope.js';
import type { Scope } from './scope.js';

/** A member of an LXD/Incus cluster (`GET /1.0/cluster/members?recursion=1`). */
export const clusterMemberSchema = z.looseObject({
  server_name: z.string(),
  url: z.string().optional(),
  /** `Online`, `Offline`, `Evacuated` (and on Incus, `Blocked`). */
  status: z.string(),
  message: z.string().optional(),
});
export type ClusterMember = z.infer<typeof clusterMemberSchema>;

/**
 * `GET /1.0/cluster/members?recursion=1`: every member with its status. The members' `url`s join
 * an HTTPS target's failover addresses (after the configured ones), so one configured address of
 * a cluster is enough.
 */
export async function listClusterMembers(scope: Scope, opts: { signal?: AbortSignal } = {}): Promise<ClusterMember[]> {
  const path = '/1.0/cluster/members?recursion=1';
  const res = await scope.sync('GET', path, opts);
  const members = parseMetadata(z.array(clusterMemberSchema), res.envelope.metadata, 'GET', path, res.status);
  scope.transport.learnAddresses(members.flatMap((m) => (m.url ? [m.url] : [])));
  return members;
}
