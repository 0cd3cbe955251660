import { z } from 'zod';
import type { Scope } from './scope.js';
import { parseMetadata } from './envelope.js';

/** `GET /` and `GET /1.0`: versions, API extensions, trust. */

export const serverInfoSchema = z.looseObject({
  api_extensions: z.array(z.string()).default([]),
  api_status: z.string().optional(),
  api_version: z.string().optional(),
  /** `trusted` or `untrusted` (the latter for a TLS client the daemon does not know). */
  auth: z.string().optional(),
  auth_methods: z.array(z.string()).optional(),
  public: z.boolean().optional(),
  environment: z
    .looseObject({
      server: z.string().optional(),
      server_version: z.string().optional(),
      certificate_fingerprint: z.string().optional(),
      server_clustered: z.boolean().optional(),
    })
    .optional(),
  config: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** Server information, with a check for API extensions (seed §9: features are added as extensions). */
export type ServerInfo = z.infer<typeof serverInfoSchema> & { has(extension: string): boolean };

export async function getServer(scope: Scope, opts: { signal?: AbortSignal } = {}): Promise<ServerInfo> {
  const path = scope.path('/1.0');
  const res = await scope.sync('GET', path, opts);
  const info = parseMetadata(serverInfoSchema, res.envelope.metadata, 'GET', path, res.status);
  const extensions = new Set(info.api_extensions);
  return Object.assign(info, { has: (extension: string) => extensions.has(extension) });
}

/** `GET /`: the supported API versions as paths (`["/1.0"]`). */
export async function getApiVersions(scope: Scope, opts: { signal?: AbortSignal } = {}): Promise<string[]> {
  const res = await scope.sync('GET', '/', opts);
  return parseMetadata(z.array(z.string()), res.envelope.metadata, 'GET', '/', res.status);
}
