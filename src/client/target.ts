import { existsSync, readFileSync, statSync } from 'node:fs';
import { ReflexError } from '../errors/reflex-error.js';

/** Where the instance API is reached: a local unix socket, or HTTPS with a client certificate. */
export type Target =
  | { kind: 'unix'; socketPath: string; url: string; project?: string }
  | {
      kind: 'https';
      origin: string;
      url: string;
      /** Client certificate and key (PEM) presented for mutual TLS. */
      cert?: string;
      key?: string;
      /** The server's certificate (PEM): its SHA-256 is the pin. */
      serverCert?: string;
      /** The server certificate's SHA-256 (hex, colons optional): the pin when no certificate file is given. */
      serverFingerprint?: string;
      /** Project the remote is configured for (lxc `project:`). */
      project?: string;
      /**
       * Every address of a cluster, in the order they are tried, `origin` first; calls and the
       * event stream fail over between them. Absent: `origin` alone. All share the TLS settings
       * (cluster members share the cluster certificate).
       */
      addresses?: string[];
    };

/** Sockets tried in order when no target is given: Debian LXD, snap LXD, Incus. */
export const localSocketCandidates = ['/var/lib/lxd/unix.socket', '/var/snap/lxd/common/lxd/unix.socket', '/var/lib/incus/unix.socket'];

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/** The first local LXD/Incus socket that exists, or undefined. */
export function findLocalSocket(): string | undefined {
  return localSocketCandidates.find(isSocket);
}

/** Client identity files for an HTTPS target. */
export interface TlsFiles {
  certFile?: string;
  keyFile?: string;
  serverCertFile?: string;
  serverFingerprint?: string;
}

/**
 * The addresses of an HTTPS target in failover order: the given origins without repeats, first
 * one first. The first is the target's `origin` and `url`, its identity in Redis keys, so which
 * member answers never changes the keys.
 */
export function httpsAddresses(values: readonly string[], what: string): { origin: string; addresses?: string[] } {
  const origins: string[] = [];
  for (const raw of values.map((v) => v.trim()).filter(Boolean)) {
    if (!raw.startsWith('https://'))
      throw new ReflexError('TARGET_INVALID', `${what}: address "${raw}" is not https://host:port (only HTTPS targets can list several addresses)`);
    const origin = new URL(raw).origin;
    if (!origins.includes(origin)) origins.push(origin);
  }
  if (origins.length === 0) throw new ReflexError('TARGET_INVALID', `${what}: no address given`);
  return origins.length > 1 ? { origin: origins[0]!, addresses: origins } : { origin: origins[0]! };
}

/** Every address of a target, in failover order (one for a unix socket or a single-address target). */
export function targetAddresses(target: Target): string[] {
  if (target.kind === 'unix') return [target.url];
  return target.addresses ?? [target.origin];
}

/**
 * Parses `unix:///path/to/socket`, `unix:/path`, a bare absolute socket path, `https://host:port`,
 * or several HTTPS addresses of one cluster, comma-separated (`https://a:8443,https://b:8443`):
 * calls and events fail over between them, and the first is the target's identity.
 * Without a value, the first local socket found is used.
 */
export function parseTarget(value: string | undefined, tls: TlsFiles = {}): Target {
  if (!value) {
    const found = findLocalSocket();
    if (!found) {
      throw new ReflexError(
        'TARGET_INVALID',
        `no target given and no local LXD/Incus socket found (tried ${localSocketCandidates.join(', ')}); pass --target unix:///path/to/unix.socket or https://host:8443`,
      );
    }
    return { kind: 'unix', socketPath: found, url: `unix://${found}` };
  }
  if (value.startsWith('unix:') || value.startsWith('/')) {
    const socketPath = value.replace(/^unix:(\/\/)?/, '');
    if (!socketPath.startsWith('/'))
      throw new ReflexError('TARGET_INVALID', `target "${value}": a unix socket path must be absolute (unix:///path/to/unix.socket)`);
    return { kind: 'unix', socketPath, url: `unix://${socketPath}` };
  }
  if (value.startsWith('https://')) {
    const { origin, addresses } = httpsAddresses(value.split(','), `target "${value}"`);
    const read = (f?: string) => {
      if (!f) return undefined;
      if (!existsSync(f)) throw new ReflexError('TARGET_INVALID', `target "${value}": file ${f} does not exist`);
      return readFileSync(f, 'utf8');
    };
    return {
      kind: 'https',
      origin,
      url: origin,
      cert: read(tls.certFile),
      key: read(tls.keyFile),
      serverCert: read(tls.serverCertFile),
      serverFingerprint: tls.serverFingerprint,
      ...(addresses ? { addresses } : {}),
    };
  }
  throw new ReflexError('TARGET_INVALID', `target "${value}" is neither unix:///path/to/socket nor https://host:port`);
}
