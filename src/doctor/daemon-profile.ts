/**
 * Which daemon a target is (LXD or Incus, from `GET /1.0`), and the differences between daemons and
 * versions that change what a rule sees. Measured on LXD 5.0.2 and Incus 6.0.4 (docs/events.md,
 * docs/rules.md).
 */

/** The part of `GET /1.0` read here. */
export interface ServerInfo {
  api_extensions?: string[];
  environment?: { server?: string; server_name?: string; server_version?: string };
}

/** The daemon's product name and version, and what a rule author should know about it. */
export interface DaemonProfile {
  /** `LXD`, `Incus`, or the server's own name when it is neither. */
  product: string;
  version: string;
  /** Differences that matter to rules, one sentence each. */
  warnings: string[];
}

export function daemonProfile(server: ServerInfo): DaemonProfile {
  const env = server.environment ?? {};
  const raw = env.server ?? 'unknown';
  const product = raw === 'lxd' ? 'LXD' : raw === 'incus' ? 'Incus' : raw;
  const version = env.server_version ?? 'unknown';
  const warnings: string[] = [];
  if (!server.api_extensions?.includes('instance_ready_state')) {
    warnings.push(
      `no instance-ready event or Ready (113) status on ${product} ${version} (LXD ≥ 5.6 and Incus have them): a rule on Ready never fires`,
    );
  }
  if (product === 'Incus') {
    warnings.push(
      'boot.autorestart=true makes Incus restart a crashed instance itself (up to 10 times a minute, seen only as instance-restarted); Reflex sees the stop when Incus gives up and acts after autorestartStandBackMs',
    );
    warnings.push('a guest reboot is reported only as instance-restarted (LXD reports instance-shutdown first)');
  }
  if (product === 'LXD') {
    warnings.push('LXD has no boot.autorestart: instances opt in to restarts with user.reflex.autorestart=true');
  }
  return { product, version, warnings };
}
