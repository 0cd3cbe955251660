import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
import { until } from './wait.js';

/** The folder of Debian's PostgreSQL server binaries (`/usr/lib/postgresql/<major>/bin`), newest major first; undefined when none is installed. */
function serverBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] && join(root, majors[0], 'bin');
}

/** Whether the tests can have a PostgreSQL: `POSTGRES_URL` is set, or Debian's `postgresql` package is installed. */
export const postgresAvailable = Boolean(process.env.POSTGRES_URL) || serverBin() !== undefined;

/** A PostgreSQL for one test file. */
export interface PrivatePostgres {
  /** A URL of a database of its own. */
  url: string;
  stop(): Promise<void>;
}

// postgres refuses to run as root: as root, the server runs as the `postgres` user (Debian's package creates it).
const asServerUser = (cmd: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];

/**
 * `POSTGRES_URL` when set (a fresh database is created in it and dropped afterwards); otherwise a
 * server of its own: initdb in a temporary folder and postgres on a free port of 127.0.0.1, with
 * its socket in that folder, so a cluster Debian started on 5432 is neither used nor in the way.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dbName = `reflex_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  if (process.env.POSTGRES_URL) return databaseIn(process.env.POSTGRES_URL, dbName, async () => undefined);
  const bin = serverBin();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql, or set POSTGRES_URL');
  const dir = mkdtempSync(join(tmpdir(), 'reflex-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const [initCmd, initArgs] = asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const [cmd, args] = asServerUser(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    dir,
    '-c',
    'fsync=off',
    '-c',
    'full_page_writes=off',
  ]);
  const server: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  server.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
  const stopServer = async () => {
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      // runuser does not pass signals on to postgres: pg_ctl stops it (fast: rolls back, closes sessions).
      const [stopCmd, stopArgs] = asServerUser(join(bin, 'pg_ctl'), ['-D', data, 'stop', '-m', 'fast', '-w']);
      spawnSync(stopCmd, stopArgs, { stdio: 'ignore' });
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitUntilAccepting(adminUrl, server, () => stderr);
  } catch (err) {
    await stopServer();
    throw err;
  }
  return databaseIn(adminUrl, dbName, stopServer);
}

async function waitUntilAccepting(url: string, server: ChildProcess, stderr: () => string): Promise<void> {
  const accepting = async () => {
    if (server.exitCode !== null) return 'exited';
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return 'accepting';
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const state = await until('postgres accepting connections', accepting, 60_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}; ${stderr()}`);
  });
  if (state === 'exited') throw new Error(`postgres exited (${server.exitCode}): ${stderr()}`);
}

async function databaseIn(adminUrl: string, dbName: string, after: () => Promise<void>): Promise<PrivatePostgres> {
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  return {
    url: url.toString(),
    stop: async () => {
      await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await after();
    },
  };
}
