import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the ports handed out are reserved, one file a port holding the owner's pid, so that two
 * processes of this machine (a test run's workers, two demos) never hand out the same port.
 */
const reservations = join(tmpdir(), 'reflex-free-ports');

/** The range below the kernel's ephemeral ports, where no outgoing connection takes a local port. */
function quietRange(): [number, number] {
  let ephemeralLow = 32_768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152, and 32768 is below it as well.
  }
  const high = Math.min(ephemeralLow, 32_768) - 1;
  return [Math.max(1_024, high - 12_000), high];
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Takes `port` for this process unless a live process holds it already. */
function reserve(port: number): boolean {
  const file = join(reservations, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8'));
      if (owner === process.pid || (owner > 0 && alive(owner))) return false;
      rmSync(file, { force: true }); // its process has ended: the port is free to hand out again
    }
  }
  return false;
}

/** Whether a server can listen on `port` of 127.0.0.1 right now. */
const listenable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/**
 * A TCP port on 127.0.0.1 that nothing listens on, for a server whose port must be known before it
 * starts (a redis-server's command line, a configuration). A port the OS picks for `listen(0)` is in
 * the ephemeral range, where the next outgoing connection of any process may take it as its local
 * port before the server binds it; so the port comes from below that range, and is reserved for
 * this process (its pid in a file) so that no other process using this function hands it out too.
 */
export async function freePort(): Promise<number> {
  mkdirSync(reservations, { recursive: true });
  const [low, high] = quietRange();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (reserve(port) && (await listenable(port))) return port;
  }
  throw new Error(`no free port between ${low} and ${high} after 200 tries`);
}
