import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAlerts } from './commands/alerts.js';
import { registerAudit } from './commands/audit.js';
import { registerDemo } from './commands/demo.js';
import { registerDlq } from './commands/dlq.js';
import { registerDoctor } from './commands/doctor.js';
import { registerHeal } from './commands/heal.js';
import { registerHousekeeping } from './commands/housekeeping.js';
import { registerReplay } from './commands/replay.js';
import { registerRules } from './commands/rules.js';
import { registerQuarantine } from './commands/quarantine.js';
import { registerSilence } from './commands/silence.js';
import { registerRun } from './commands/run.js';
import { registerSim } from './commands/sim.js';

/**
 * The version of the installed package. package.json sits two levels above this file both in the
 * checkout (src/cli/) and once compiled (dist/cli/).
 */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

/**
 * Builds the `reflex` command line. Each sub-command lives in commands/<name>.ts and only wires.
 * Every usage error (unknown command or option, missing or bad value, conflicting options) is one
 * line on stderr and exit code 2 (entry.ts); the settings below are inherited by every sub-command.
 */
export function buildProgram(): Command {
  const program = new Command('reflex')
    .description('Event-driven automation worker for LXD and Incus')
    .version(packageVersion(), '-V, --version', 'print the version of Reflex')
    .configureOutput({
      outputError: (text, write) =>
        write(
          `reflex: ${text
            .replace(/^error: /, '')
            .trim()
            .replaceAll('\n', ' ')}\n`,
        ),
    })
    .exitOverride();
  registerDemo(program);
  registerRun(program);
  registerAudit(program);
  registerSim(program);
  registerRules(program);
  registerReplay(program);
  registerSilence(program);
  registerAlerts(program);
  registerQuarantine(program);
  registerDlq(program);
  registerHeal(program);
  registerHousekeeping(program);
  registerDoctor(program);
  return program;
}
