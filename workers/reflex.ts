/**
 * Process entry point of the worker from a checkout, without building (`node --import tsx
 * workers/reflex.ts`): the configuration from REFLEX_CONFIG (or /etc/reflex/config.yaml) and the
 * environment, as `reflex run` takes it without flags; runs until SIGTERM, then drains. An
 * installation (the systemd unit, the container) runs the compiled `reflex run` instead.
 */
import { runUntilSignal } from '../src/app/run-until-signal.js';
import { resolveConfig } from '../src/cli/config-options.js';
import { createLogger } from '../src/log/logger.js';

const config = resolveConfig({});
await runUntilSignal(config, createLogger(config.logLevel));
