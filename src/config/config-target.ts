import { resolveRemote } from '../client/remote.js';
import { parseTarget, type Target } from '../client/target.js';
import type { Config } from './config.js';

/** The target a configuration points at: a named lxc/incus remote, or `target` with its TLS files. */
export function targetOf(config: Config): Target {
  if (config.remote) return resolveRemote(config.remote);
  return parseTarget(config.target, {
    certFile: config.clientCert,
    keyFile: config.clientKey,
    serverCertFile: config.serverCert,
    serverFingerprint: config.serverFingerprint,
  });
}
