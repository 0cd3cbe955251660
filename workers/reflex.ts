/**
 * Process entry point of the worker for service managers and containers (`node --import tsx
 * workers/reflex.ts`): the configuration from REFLEX_CONFIG and the environment, as `reflex run`
 * takes it without flags; runs until SIGTERM, then drains.
 */
import { runUntilSignal } from '../src/app/run-until-signal.js';
import { resolveConfig } from '../src/cli/config-options.js';
import { createLogger } from '../src/log/logger.js';

const config = resolveConfig({});
await runUntilSignal(config, createLogger(config.logLevel));
