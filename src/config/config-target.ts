import { resolveRemote } from '../client/remote.js';
import { parseTarget, targetAddresses, type Target } from '../client/target.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { Config, TargetEntry } from './config.js';

/** One server or cluster a deployment watches. */
export interface ConfiguredTarget {
  /** What logs and /readyz call it: the `targets` entry's name, or the URL for the single-target fields. */
  name: string;
  /**
   * Its identity in Redis keys (lease, state, locks), job payloads, audit records and metric
   * labels: the server's URL, as with one target, so moving to a `targets` list keeps the keys.
   * For a cluster with several addresses, the first configured one, whichever member answers.
   */
  id: string;
  target: Target;
  /** The one project watched (events, resyncs); none: every project. */
  project?: string;
}

/** The target of the single-target fields: a named lxc/incus remote, or `target` with its TLS files. */
function singleTarget(c: Pick<Config, 'target' | 'remote' | 'clientCert' | 'clientKey' | 'serverCert' | 'serverFingerprint'>): Target {
  if (c.remote) return resolveRemote(c.remote);
  return parseTarget(c.target, {
    certFile: c.clientCert,
    keyFile: c.clientKey,
    serverCertFile: c.serverCert,
    serverFingerprint: c.serverFingerprint,
  });
}

function entryTarget(entry: TargetEntry, index: number): ConfiguredTarget {
  let target: Target;
  try {
    // A cluster's addresses are the comma-separated form of `target`: one parser for both.
    target = singleTarget(entry.addresses ? { ...entry, target: entry.addresses.join(',') } : entry);
  } catch (err) {
    const e = err as ReflexError;
    throw new ReflexError(
      e.code ?? 'CONFIG_INVALID',
      `targets.${index}.${entry.remote ? 'remote' : entry.addresses ? 'addresses' : 'target'} (${entry.name}): ${e.message}`,
      { cause: err },
    );
  }
  // Scoping returns a new target rather than changing the one a remote resolved to.
  const scoped = entry.project ? { ...target, project: entry.project } : target;
  return { name: entry.name, id: scoped.url, target: scoped, project: entry.project };
}

/**
 * Every target of a configuration: the `targets` list, or the one target of the single-target
 * fields. Two entries for the same server are refused: they would share its lease and state.
 */
export function targetsOf(config: Config): ConfiguredTarget[] {
  if (!config.targets) {
    const target = singleTarget(config);
    return [{ name: target.url, id: target.url, target }];
  }
  const out = config.targets.map(entryTarget);
  out.forEach((t, i) => {
    // Two entries sharing any address are the same cluster, even when listed in another order.
    const mine = targetAddresses(t.target);
    const first = out.findIndex((o) => targetAddresses(o.target).some((a) => mine.includes(a)));
    if (first < i) {
      throw new ReflexError(
        'CONFIG_INVALID',
        `targets.${i}.target (${t.name}): the same server as targets.${first} (${out[first]!.id}); give one entry per server or cluster (without project, an entry watches every project)`,
      );
    }
  });
  return out;
}
