import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { wholeNumber, usageError } from '../option-values.js';

interface SimFlags {
  listen: string[];
  revision: 'earlier' | 'later';
  instances: number;
  seed?: number;
  trustPassword?: string;
  trustCertificate: string[];
  token?: string | boolean;
  tlsCert?: string;
  tlsKey?: string;
  members?: string[];
  guestPort: number[];
}

const repeatable = (v: string, acc: string[]): string[] => [...acc, v];
const port = wholeNumber(1);
const guestPorts = (v: string, acc: number[]): number[] => {
  const n = port(v);
  if (n > 65_535) throw new InvalidArgumentError('expected a port, 1 to 65535');
  return [...acc, n];
};

/** Adds `reflex sim`: runs the embedded instance-service simulator until SIGINT/SIGTERM. */
export function registerSim(program: Command): void {
  program
    .command('sim')
    .description('Run the embedded LXD/Incus API simulator (docs/simulator.md)')
    .option('--listen <address>', 'unix:/path/to.sock or https://127.0.0.1:PORT (repeatable)', repeatable, [] as string[])
    .addOption(
      new Option('--revision <revision>', 'API revision: earlier (LXD 5.0-like) or later (Incus-like)')
        .choices(['earlier', 'later'])
        .default('earlier'),
    )
    .option('--instances <n>', 'number of running containers to seed', wholeNumber(0), 0)
    .option('--seed <n>', 'seed for deterministic ids', wholeNumber(0))
    .option('--trust-password <password>', 'trust password for `lxc remote add … --password` (earlier revision)')
    .option('--trust-certificate <file>', 'PEM client certificate to trust on HTTPS (repeatable)', repeatable, [] as string[])
    .option('--token [client-name]', 'print a trust token for `lxc remote add NAME <token>` (needs HTTPS)')
    .option('--tls-cert <file>', 'server certificate (PEM) for HTTPS; a self-signed one is made when absent')
    .option('--tls-key <file>', 'server key (PEM) for --tls-cert')
    .option(
      '--guest-port <port>',
      "the port each running instance's HTTP endpoint listens on, on its own address (repeatable; default one free port, printed at start)",
      guestPorts,
      [] as number[],
    )
    .option('--members <names>', 'simulate a cluster of these members (comma-separated, e.g. m1,m2,m3)', (v: string) =>
      v
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
    )
    .action(async (flags: SimFlags, cmd: Command) => {
      if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) usageError(cmd, '--tls-cert and --tls-key go together');
      // Loaded on use: the simulator (and its TLS certificate generator) stays out of `reflex run`.
      const { startSimulator } = await import('../../simulator/simulator.js');
      const sim = await startSimulator({
        listen: flags.listen,
        revision: flags.revision,
        instances: flags.instances,
        seed: flags.seed,
        trustPassword: flags.trustPassword,
        trustedCertificates: flags.trustCertificate.map((f) => readFileSync(f, 'utf8')),
        tls: flags.tlsCert && flags.tlsKey ? { cert: readFileSync(flags.tlsCert, 'utf8'), key: readFileSync(flags.tlsKey, 'utf8') } : undefined,
        cluster: flags.members?.length ? { members: flags.members } : undefined,
        guestPorts: flags.guestPort.length ? flags.guestPort : undefined,
      });
      if (sim.socketPath) process.stdout.write(`reflex sim listening on unix:${sim.socketPath}\n`);
      if (sim.httpsUrl) process.stdout.write(`reflex sim listening on ${sim.httpsUrl}\n`);
      process.stdout.write(
        `reflex sim guest port: ${sim.guestPorts.join(', ')} (each running instance answers HTTP on its own address there: the port of http and tcp probes)\n`,
      );
      if (flags.token !== undefined) {
        const token = sim.controls.issueToken(typeof flags.token === 'string' ? flags.token : 'client');
        process.stdout.write(`reflex sim trust token: ${token}\n`);
      }
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await sim.stop();
    });
}
