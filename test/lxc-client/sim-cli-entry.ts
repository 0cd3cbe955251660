// Runs only the `reflex sim` command (src/cli/commands/sim.ts) as the CLI wires it, without the
// rest of the CLI, so its flags can be tested as a process.
import { Command } from 'commander';
import { registerSim } from '../../src/cli/commands/sim.js';

const program = new Command();
registerSim(program);
await program.parseAsync(['node', 'reflex', 'sim', ...process.argv.slice(2)]);
