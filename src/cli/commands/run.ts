import type { Command } from 'commander';
import { configFromEnv, parseConfig, type ConfigInput } from '../../config/config.js';
import { createLogger } from '../../log/logger.js';
import { startReflex } from '../../../workers/reflex.js';

/** `reflex run`: the long-running worker. Flags override environment variables. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description('subscribe to the instance server, run the rules and their actions')
    .option('--target <url>', 'unix:///path/to/unix.socket or https://host:8443 (env REFLEX_TARGET; default: first local LXD/Incus socket)')
    .option('--redis <url>', 'Redis URL (env REDIS_URL; default redis://127.0.0.1:6379)')
    .option('--rules <dir>', 'folder of rule files (env REFLEX_RULES; default ./rules)')
    .option('--role <role>', 'all | subscriber | worker (env REFLEX_ROLE; default all)')
    .option('--prefix <prefix>', 'Redis key prefix (env REFLEX_PREFIX; default reflex)')
    .option('--resync-interval <ms>', 'periodic full resync, 0 disables (default 30000)', Number)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env REFLEX_LOG_LEVEL)')
    .option('--print-config', 'print the effective configuration and exit')
    .action(async (opts) => {
      const flags: ConfigInput = {
        target: opts.target,
        redisUrl: opts.redis,
        rulesDir: opts.rules,
        role: opts.role,
        prefix: opts.prefix,
        resyncIntervalMs: opts.resyncInterval,
        logLevel: opts.logLevel,
      };
      const config = parseConfig({ ...configFromEnv(), ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) });
      if (opts.printConfig) {
        process.stdout.write(`${JSON.stringify(config, null, 2)}\n`);
        return;
      }
      const logger = createLogger(config.logLevel);
      const handle = await startReflex(config, logger);
      logger.info({ target: handle.target, role: config.role }, 'reflex running');
      await new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          logger.info({ signal }, 'stopping');
          handle.stop().then(resolve, (err) => {
            logger.error({ err: (err as Error).message }, 'error while stopping');
            resolve();
          });
        };
        process.once('SIGTERM', () => shutdown('SIGTERM'));
        process.once('SIGINT', () => shutdown('SIGINT'));
      });
    });
}
