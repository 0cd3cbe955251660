import type { Command } from 'commander';

/** Adds `reflex sim`: runs the embedded instance-service simulator until SIGINT/SIGTERM. */
export function registerSim(program: Command): void {
  program
    .command('sim')
    .description('Run the embedded LXD/Incus API simulator (docs/simulator.md)')
    .option('--listen <address>', 'unix:/path/to.sock or https://127.0.0.1:PORT (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--revision <revision>', 'API revision: earlier (LXD 5.0-like) or later (Incus-like)', 'earlier')
    .option('--instances <n>', 'number of running containers to seed', '0')
    .option('--seed <n>', 'seed for deterministic ids')
    .action(async (flags: { listen: string[]; revision: string; instances: string; seed?: string }) => {
      if (flags.revision !== 'earlier' && flags.revision !== 'later') throw new Error(`--revision must be earlier or later, not ${flags.revision}`);
      // Loaded on use: the simulator (and its TLS certificate generator) stays out of `reflex run`.
      const { startSimulator } = await import('../../simulator/simulator.js');
      const sim = await startSimulator({
        listen: flags.listen,
        revision: flags.revision,
        instances: Number(flags.instances),
        seed: flags.seed === undefined ? undefined : Number(flags.seed),
      });
      if (sim.socketPath) process.stdout.write(`reflex sim listening on unix:${sim.socketPath}\n`);
      if (sim.httpsUrl) process.stdout.write(`reflex sim listening on ${sim.httpsUrl}\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await sim.stop();
    });
}
