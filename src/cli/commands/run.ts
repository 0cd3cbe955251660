import type { Command } from 'commander';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { createLogger } from '../../log/logger.js';
import { runUntilSignal } from '../../app/run-until-signal.js';
import { redact } from '../../audit/redact.js';

/** `reflex run`: the long-running worker. Flags override environment variables. */
export function registerRun(program: Command): void {
  withConnectionOptions(program.command('run').description('subscribe to the instance server, run the rules and their actions'))
    .option('--role <role>', 'all | subscriber | worker | scheduler (env REFLEX_ROLE; default all)')
    .option('--resync-interval <ms>', 'periodic full resync, 0 disables (default 30000)', Number)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env REFLEX_LOG_LEVEL)')
    .option('--http-host <address>', 'address of /metrics, /healthz, /readyz and /dashboard (env REFLEX_HTTP_HOST; default 127.0.0.1)')
    .option('--http-port <port>', 'port of that HTTP server, 0 disables it (env REFLEX_HTTP_PORT; default 9464)', Number)
    .option('--print-config', 'print the effective configuration and exit')
    .action(async (opts) => {
      // The dashboard token is not a flag (a command line is visible to every local user): env REFLEX_DASHBOARD_TOKEN or the config file.
      const config = resolveConfig(opts, { role: opts.role, resyncIntervalMs: opts.resyncInterval, logLevel: opts.logLevel, httpHost: opts.httpHost, httpPort: opts.httpPort });
      if (opts.printConfig) {
        // Secrets (the dashboard token, a password in the Redis URL) are redacted; the client key
        // setting is a file path, not the key, so it is shown as is.
        const keyPath = <T extends { clientKey?: string }>(shown: T, given: { clientKey?: string }): T => (given.clientKey ? { ...shown, clientKey: given.clientKey } : shown);
        const shown = keyPath(redact(config), config);
        if (config.targets) shown.targets = redact(config.targets).map((t, i) => keyPath(t, config.targets![i]!));
        process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
        return;
      }
      await runUntilSignal(config, createLogger(config.logLevel));
    });
}
