import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type * as Yaml from 'yaml';
import { z } from 'zod';
import { ReflexError } from '../errors/reflex-error.js';
import { findLocalSocket, httpsAddresses, type Target } from './target.js';

/**
 * Zero-setup remotes: the `lxc` and `incus` client configuration (notes §7) turned into a
 * Target, so `--remote NAME` works wherever `lxc NAME:` does.
 */

const remoteSchema = z.looseObject({
  addr: z.string(),
  protocol: z.string().optional(),
  auth_type: z.string().optional(),
  project: z.string().optional(),
  public: z.boolean().optional(),
});
const configSchema = z.looseObject({
  'default-remote': z.string().optional(),
  remotes: z.record(z.string(), remoteSchema).nullable().optional(),
});

type Tool = 'lxc' | 'incus';
type Env = Record<string, string | undefined>;

/** One client configuration directory and what it declares. */
interface ConfigDir {
  tool: Tool;
  dir: string;
  defaultRemote: string | undefined;
  remotes: Record<string, z.infer<typeof remoteSchema>>;
}

function home(env: Env): string {
  return env.HOME || homedir();
}

/** Configuration directories in lookup order: user lxc, global lxc, user incus, global incus. */
function configDirs(env: Env): { tool: Tool; dir: string }[] {
  return [
    { tool: 'lxc', dir: env.LXD_CONF || join(home(env), '.config', 'lxc') },
    { tool: 'lxc', dir: join(home(env), 'snap', 'lxd', 'common', 'config') },
    { tool: 'lxc', dir: env.LXD_GLOBAL_CONF || '/etc/lxd' },
    { tool: 'incus', dir: env.INCUS_CONF || join(home(env), '.config', 'incus') },
    { tool: 'incus', dir: env.INCUS_GLOBAL_CONF || '/etc/incus' },
  ];
}

/** The YAML parser, loaded on the first file read: most commands read none, and loading it costs ~35 ms of CPU at start-up. */
function parseYaml(text: string, options: Yaml.ParseOptions & Yaml.DocumentOptions & Yaml.SchemaOptions & Yaml.ToJSOptions): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text, options);
}

function readConfig(tool: Tool, dir: string): ConfigDir | undefined {
  const file = join(dir, 'config.yml');
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'), { logLevel: 'error' });
  } catch (err) {
    throw new ReflexError('CONFIG_INVALID', `${file}: not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  const parsed = configSchema.safeParse(raw ?? {});
  if (!parsed.success) throw new ReflexError('CONFIG_INVALID', `${file}: not an ${tool} client configuration: ${parsed.error.message}`);
  return { tool, dir, defaultRemote: parsed.data['default-remote'], remotes: parsed.data.remotes ?? {} };
}

function localSocket(tool: Tool, env: Env): string | undefined {
  const explicit =
    tool === 'lxc'
      ? env.LXD_SOCKET || (env.LXD_DIR && join(env.LXD_DIR, 'unix.socket'))
      : env.INCUS_SOCKET || (env.INCUS_DIR && join(env.INCUS_DIR, 'unix.socket'));
  if (explicit) return explicit;
  if (tool === 'incus') return existsSync('/var/lib/incus/unix.socket') ? '/var/lib/incus/unix.socket' : undefined;
  return findLocalSocket();
}

/**
 * The target of a remote named in the user's lxc or incus configuration (`$LXD_CONF`,
 * `~/.config/lxc`, `/etc/lxd`, `$INCUS_CONF`, `~/.config/incus`, first match wins).
 * HTTPS remotes use `client.crt`/`client.key` of that directory and pin
 * `servercerts/<name>.crt` (without it, the system CAs verify the server, as in lxc); the
 * remote's `project` becomes the target's project.
 * Without a name, the configuration's default remote is used. `local` is built in.
 *
 * Throws REMOTE_UNKNOWN for an unknown name, REMOTE_UNSUPPORTED for image servers
 * (simplestreams or public) and auth types other than tls (candid, oidc).
 */
export function resolveRemote(name?: string, env: Env = process.env): Target {
  const configs = configDirs(env).flatMap(({ tool, dir }) => readConfig(tool, dir) ?? []);
  const wanted = name ?? configs.find((c) => c.defaultRemote)?.defaultRemote ?? 'local';
  const found = configs.find((c) => wanted in c.remotes);
  if (!found) {
    if (wanted === 'local') return unixTarget('lxc', 'unix://', env, undefined, wanted);
    const known = [...new Set(configs.flatMap((c) => Object.keys(c.remotes)))].sort();
    throw new ReflexError(
      'REMOTE_UNKNOWN',
      `no remote "${wanted}" in ${configDirs(env)
        .map((d) => join(d.dir, 'config.yml'))
        .join(', ')}${known.length ? ` (known: ${known.join(', ')})` : ''}`,
    );
  }
  const remote = found.remotes[wanted]!;
  const where = `remote "${wanted}" of ${join(found.dir, 'config.yml')}`;
  if (remote.protocol === 'simplestreams' || (remote.protocol && remote.protocol !== 'lxd' && remote.protocol !== 'incus')) {
    throw new ReflexError('REMOTE_UNSUPPORTED', `${where} is an image server (protocol ${remote.protocol}), not an instance API`);
  }
  if (remote.public) throw new ReflexError('REMOTE_UNSUPPORTED', `${where} is a public image server, not an instance API`);
  if (remote.addr.startsWith('unix:')) return unixTarget(found.tool, remote.addr, env, remote.project, wanted);
  const authType = remote.auth_type ?? 'tls';
  if (authType !== 'tls') {
    throw new ReflexError(
      'REMOTE_UNSUPPORTED',
      `${where} uses auth_type ${authType}; Reflex supports only tls (client certificates): re-add the remote with \`${found.tool} remote add ${wanted} ${remote.addr} --auth-type=tls\``,
    );
  }
  const addrs = remote.addr
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  if (addrs.length === 0 || !addrs.every((a) => a.startsWith('https://')))
    throw new ReflexError('REMOTE_UNSUPPORTED', `${where} has address ${remote.addr}; expected https://… or unix://…`);
  const file = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : undefined);
  const cert = file(join(found.dir, 'client.crt'));
  const key = file(join(found.dir, 'client.key'));
  if (key && /ENCRYPTED/.test(key))
    throw new ReflexError('REMOTE_UNSUPPORTED', `${join(found.dir, 'client.key')} is encrypted; Reflex cannot prompt for its passphrase`);
  // Like lxc: no servercerts/<name>.crt means the server has a CA-signed certificate, verified
  // against the system CAs; otherwise that certificate is the pin.
  const serverCert = file(join(found.dir, 'servercerts', `${wanted}.crt`));
  // A clustered remote may list several members' addresses: the first is its identity, the others failover.
  const { origin, addresses } = httpsAddresses(addrs, where);
  return { kind: 'https', origin, url: origin, cert, key, serverCert, project: remote.project, ...(addresses ? { addresses } : {}) };
}

/**
 * Names of the remotes `resolveRemote` can use (instance APIs over a unix socket or tls), across
 * the lxc and incus configurations; image servers and other auth types are skipped.
 */
export function listRemotes(env: Env = process.env): string[] {
  const names = new Set<string>(['local']);
  for (const { tool, dir } of configDirs(env)) {
    const config = readConfig(tool, dir);
    for (const [name, r] of Object.entries(config?.remotes ?? {})) {
      const imageOnly = r.public || (r.protocol !== undefined && r.protocol !== 'lxd' && r.protocol !== 'incus');
      if (!imageOnly && (r.addr.startsWith('unix:') || (r.auth_type ?? 'tls') === 'tls')) names.add(name);
    }
  }
  return [...names].sort();
}

function unixTarget(tool: Tool, addr: string, env: Env, project: string | undefined, name: string): Target {
  const path = addr.replace(/^unix:(\/\/)?/, '');
  const socketPath = path || localSocket(tool, env);
  if (!socketPath)
    throw new ReflexError('TARGET_INVALID', `remote "${name}" is the local ${tool === 'lxc' ? 'LXD' : 'Incus'} socket, but none was found`);
  return { kind: 'unix', socketPath, url: `unix://${socketPath}`, project };
}
