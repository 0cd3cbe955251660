import { Option, type Command } from 'commander';
import { configSchema, roleSchema } from '../../config/config.js';
import { configFileOf, resolveConfig, withConnectionOptions } from '../config-options.js';
import { createLogger } from '../../log/logger.js';
import { durationValue, wholeNumber } from '../option-values.js';
import { runUntilSignal } from '../../app/run-until-signal.js';
import { checkBindable } from '../../http/http-server.js';
import { targetsOf } from '../../config/config-target.js';
import { plainSecretUrlWarnings } from '../../notify/receiver-config.js';
import { shownConfig } from '../shown-config.js';

/** `reflex run`: the long-running worker. Flags override environment variables. */
export function registerRun(program: Command): void {
  withConnectionOptions(program.command('run').description('subscribe to the instance server, run the rules and their actions'))
    .addOption(new Option('--role <role>', 'which parts this process runs (env REFLEX_ROLE; default all)').choices(roleSchema.options))
    .option('--resync-interval <duration>', 'periodic full resync, e.g. 30s; 0 disables (default 30s)', durationValue)
    .addOption(
      new Option('--log-level <level>', 'pino level (env REFLEX_LOG_LEVEL; default info)').choices(configSchema.shape.logLevel.unwrap().options),
    )
    .option('--http-host <address>', 'address of /metrics, /healthz, /readyz and /dashboard (env REFLEX_HTTP_HOST; default 127.0.0.1)')
    .option('--http-port <port>', 'port of that HTTP server, 0 disables it (env REFLEX_HTTP_PORT; default 9464)', wholeNumber(0))
    .option(
      '--wait-for-target',
      'start even if the target does not answer yet, and wait for it (env REFLEX_WAIT_FOR_TARGET=1); default: exit with an error',
    )
    .option(
      '--no-typecheck',
      'do not type-check the rule files at start and at reloads (config typecheckRules: false), for rules checked in CI with reflex rules check; default: a type error refuses the start (exit 3) or the reload',
    )
    .option('--print-config', 'print the effective configuration and exit')
    .action(async (opts) => {
      // The dashboard token is not a flag (a command line is visible to every local user): env REFLEX_DASHBOARD_TOKEN or the config file.
      const config = resolveConfig(opts, {
        role: opts.role,
        resyncIntervalMs: opts.resyncInterval,
        logLevel: opts.logLevel,
        httpHost: opts.httpHost,
        httpPort: opts.httpPort,
        waitForTarget: opts.waitForTarget,
        typecheckRules: opts.typecheck === false ? false : undefined,
      });
      if (opts.printConfig) {
        for (const w of plainSecretUrlWarnings(config.notifications?.receivers ?? [])) process.stderr.write(`reflex: warning: ${w}\n`);
        process.stdout.write(`${JSON.stringify(shownConfig(config), null, 2)}\n`);
        return;
      }
      // The config's own errors first (a target that cannot be read): a taken port is the machine's.
      targetsOf(config);
      if (config.httpPort > 0) await checkBindable(config.httpHost, config.httpPort);
      const logger = createLogger(config.logLevel);
      const configFile = configFileOf(opts);
      logger.info(
        { configFile: configFile ?? null },
        configFile ? `configuration read from ${configFile}` : 'no configuration file: defaults, environment and flags',
      );
      await runUntilSignal(config, logger);
    });
}
