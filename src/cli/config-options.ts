import type { Command } from 'commander';
import { dirname, isAbsolute, resolve } from 'node:path';
import { DEFAULT_CONFIG_FILE, SERVICE_RULES_DIR, configFileToRead, defaultRulesDir, readConfigFile } from '../config/config-file.js';
import { configFromEnv, parseConfig, type Config, type ConfigInput } from '../config/config.js';

const configOption = [
  '--config <file>',
  `configuration file, YAML or JSON (env REFLEX_CONFIG; default ${DEFAULT_CONFIG_FILE} when it exists)`,
] as const;
const redisOption = [
  '--redis <url>',
  'redis://host:port, redis-sentinel://host:port[,host:port…]/MASTER or redis-cluster://host:port[,host:port…] (rediss… for TLS; env REDIS_URL; default redis://127.0.0.1:6379)',
] as const;
const prefixOption = ['--prefix <prefix>', 'Redis key prefix (env REFLEX_PREFIX; default reflex)'] as const;

/** Adds the options every command that talks to Redis or the target shares. */
export function withConnectionOptions(cmd: Command): Command {
  return cmd
    .option(...configOption)
    .option(
      '--target <url>',
      'unix:///path/to/unix.socket or https://host:8443; a cluster as several comma-separated https addresses, tried in order (env REFLEX_TARGET; default: first local LXD/Incus socket)',
    )
    .option('--remote <name>', 'a remote from your lxc/incus client config, instead of --target (env REFLEX_REMOTE)')
    .option('--client-cert <file>', 'client certificate for an HTTPS target (env REFLEX_CLIENT_CERT)')
    .option('--client-key <file>', 'client key for an HTTPS target (env REFLEX_CLIENT_KEY)')
    .option('--server-cert <file>', 'pin this server certificate (env REFLEX_SERVER_CERT)')
    .option('--server-fingerprint <sha256>', 'pin this server certificate fingerprint (env REFLEX_SERVER_FINGERPRINT)')
    .option(...redisOption)
    .option('--rules <dir>', `folder of rule files (env REFLEX_RULES; default ./rules, or ${SERVICE_RULES_DIR} when there is no ./rules)`)
    .option(...prefixOption);
}

/**
 * Adds the options of a command that reads only what Redis and the history store hold (`reflex
 * audit`): the configuration file, Redis and the prefix. Read by {@link resolveConfig} like the others.
 */
export function withStoreOptions(cmd: Command): Command {
  return cmd
    .option(...configOption)
    .option(...redisOption)
    .option(...prefixOption);
}

/**
 * The configuration file a command reads: `--config`, else `REFLEX_CONFIG`, else
 * /etc/reflex/config.yaml when it exists, else none.
 * @param defaultFile the file read when none is named (default /etc/reflex/config.yaml).
 */
export function configFileOf(opts: Record<string, unknown>, defaultFile: string = DEFAULT_CONFIG_FILE): string | undefined {
  return configFileToRead((opts.config as string | undefined) || process.env.REFLEX_CONFIG || undefined, defaultFile);
}

/**
 * The effective configuration: defaults < config file ({@link configFileOf}) < environment <
 * flags. Every error names the field, the value and what was expected.
 * @param defaultFile the file read when none is named (default /etc/reflex/config.yaml).
 */
export function resolveConfig(opts: Record<string, unknown>, extra: ConfigInput = {}, defaultFile: string = DEFAULT_CONFIG_FILE): Config {
  const file = configFileOf(opts, defaultFile);
  const flags: ConfigInput = {
    target: opts.target as string | undefined,
    remote: opts.remote as string | undefined,
    clientCert: opts.clientCert as string | undefined,
    clientKey: opts.clientKey as string | undefined,
    serverCert: opts.serverCert as string | undefined,
    serverFingerprint: opts.serverFingerprint as string | undefined,
    redisUrl: opts.redis as string | undefined,
    rulesDir: opts.rules as string | undefined,
    prefix: opts.prefix as string | undefined,
    ...extra,
  };
  const defined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  const fromFile = file ? readConfigFile(file) : {};
  // A relative rulesDir or history.dir in a config file is relative to that file's folder, wherever
  // reflex runs from: the service (in its state directory) and a shell read the same folders.
  if (file && typeof fromFile.rulesDir === 'string' && !isAbsolute(fromFile.rulesDir)) fromFile.rulesDir = resolve(dirname(file), fromFile.rulesDir);
  const fileHistory = fromFile.history;
  const mapping = fileHistory === undefined || (typeof fileHistory === 'object' && fileHistory !== null && !Array.isArray(fileHistory));
  if (file && mapping && typeof fileHistory?.dir === 'string' && !isAbsolute(fileHistory.dir))
    fromFile.history = { ...fileHistory, dir: resolve(dirname(file), fileHistory.dir) };
  const env = configFromEnv();
  // REFLEX_HISTORY_STORE / _DIR and --history / --history-dir set fields of the file's history
  // section, not the whole section (a section that is not a mapping fails validation as given).
  const history = mapping ? { ...fromFile.history, ...env.history, ...defined(historyFlags(opts)) } : undefined;
  const input = { rulesDir: defaultRulesDir(), ...fromFile, ...env, ...defined(flags) } as ConfigInput;
  return parseConfig(history && Object.keys(history).length ? { ...input, history } : input);
}

/** `--history <store>` and `--history-dir <dir>` (which implies the files store), for the commands that read the audit trail. */
function historyFlags(opts: Record<string, unknown>): Record<string, unknown> {
  return {
    ...(opts.historyDir !== undefined ? { store: 'files', dir: opts.historyDir } : {}),
    ...(opts.history !== undefined ? { store: opts.history } : {}),
  };
}
