import { Command } from 'commander';
import { registerAudit } from './commands/audit.js';
import { registerDemo } from './commands/demo.js';
import { registerDlq } from './commands/dlq.js';
import { registerDoctor } from './commands/doctor.js';
import { registerHeal } from './commands/heal.js';
import { registerReplay } from './commands/replay.js';
import { registerRules } from './commands/rules.js';
import { registerQuarantine } from './commands/quarantine.js';
import { registerSilence } from './commands/silence.js';
import { registerRun } from './commands/run.js';
import { registerSim } from './commands/sim.js';

/** Builds the `reflex` command line. Each sub-command lives in commands/<name>.ts and only wires. */
export function buildProgram(): Command {
  const program = new Command('reflex')
    .description('Event-driven automation worker for LXD and Incus')
    .showHelpAfterError()
    .exitOverride();
  registerDemo(program);
  registerRun(program);
  registerAudit(program);
  registerSim(program);
  registerRules(program);
  registerReplay(program);
  registerSilence(program);
  registerQuarantine(program);
  registerDlq(program);
  registerHeal(program);
  registerDoctor(program);
  return program;
}
