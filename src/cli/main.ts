import { Command } from 'commander';
import { registerAudit } from './commands/audit.js';
import { registerDemo } from './commands/demo.js';
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
  return program;
}
