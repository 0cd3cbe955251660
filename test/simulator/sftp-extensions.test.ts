import { connect, type Socket } from 'node:net';
import sftpProtocol from 'ssh2/lib/protocol/SFTP.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

/**
 * The SFTP extensions the daemons' server (pkg/sftp) advertises and serves, held to what ssh2's
 * SFTP client got from Incus 6.0.4 (`GET /1.0/instances/<n>/sftp`; LXD 5.0.2 advertises the same).
 */
type Client = InstanceType<typeof sftpProtocol.SFTP> & { _extensions: Record<string, string>; _init(): void };

let sim: RunningSimulator;
let socket: Socket;
let client: Client;

/** An SFTP client session (ssh2's, version 3) on the instance's upgraded connection. */
async function open(name: string): Promise<Client> {
  socket = connect(sim.socketPath!);
  await new Promise((ready) => socket.once('connect', ready));
  socket.write(`GET /1.0/instances/${name}/sftp HTTP/1.1\r\nHost: sim\r\nUpgrade: sftp\r\nConnection: Upgrade\r\n\r\n`);
  let head = Buffer.alloc(0);
  return new Promise((ready) => {
    let sftp: Client | undefined;
    socket.on('data', (chunk: Buffer) => {
      if (sftp) return sftp.push(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const channel = { id: 0, window: Infinity, packetSize: 32768, state: 'open' };
      sftp = new sftpProtocol.SFTP(
        { _protocol: { _remoteIdentRaw: 'SSH-2.0-OpenSSH_9.6', channelData: (_id, data) => socket.write(data), channelClose: () => socket.end() } },
        { type: 'sftp', incoming: channel, outgoing: { ...channel } },
        { server: false },
      ) as Client;
      sftp.on('ready', () => ready(sftp!));
      sftp._init();
      if (head.length > end + 4) sftp.push(head.subarray(end + 4));
    });
  });
}

/** A client call's outcome: its answer, or the error's message and status code. */
function call(method: string, ...args: unknown[]): Promise<unknown> {
  return new Promise((done) =>
    (client as unknown as Record<string, (...a: unknown[]) => void>)[method]!(
      ...args,
      (err: (Error & { code?: number }) | undefined, value: unknown) => done(err ? { error: err.message, code: err.code } : (value ?? 'ok')),
    ),
  );
}

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings, revision: 'later' });
  sim.controls.addInstance({ name: 'x', status: 'Running' });
  client = await open('x');
});

afterAll(async () => {
  socket?.destroy();
  await sim.stop();
});

describe("the instance's SFTP server", () => {
  it('advertises hardlink, posix-rename and statvfs of openssh.com, as pkg/sftp does', () => {
    expect(client._extensions).toEqual({ 'hardlink@openssh.com': '1', 'posix-rename@openssh.com': '1', 'statvfs@openssh.com': '2' });
  });

  it("renames with posix-rename over an existing name, and refuses a missing one in os.Rename's words", async () => {
    await call('writeFile', '/tmp/x1', 'hello');
    await call('writeFile', '/tmp/x3', 'other');
    expect(await call('ext_openssh_rename', '/tmp/x1', '/tmp/x2')).toBe('ok');
    expect(await call('ext_openssh_rename', '/tmp/x3', '/tmp/x2')).toBe('ok');
    expect(String(await call('readFile', '/tmp/x2'))).toBe('other');
    expect(await call('ext_openssh_rename', 'tmp/nosuch', 'tmp/x4')).toEqual({
      error: 'rename tmp/nosuch tmp/x4: no such file or directory',
      code: 2,
    });
    expect(await call('ext_openssh_rename', '/tmp/x2', '/nodir/x4')).toEqual({
      error: 'rename /tmp/x2 /nodir/x4: no such file or directory',
      code: 2,
    });
  });

  it("links with hardlink, and refuses a taken name, a missing file and a directory in os.Link's words", async () => {
    await call('writeFile', '/tmp/h1', 'one');
    expect(await call('ext_openssh_hardlink', '/tmp/h1', '/tmp/h2')).toBe('ok');
    await call('writeFile', '/tmp/h2', 'two');
    expect(String(await call('readFile', '/tmp/h1'))).toBe('two');
    expect(await call('ext_openssh_hardlink', '/tmp/h1', '/tmp/h2')).toEqual({ error: 'link /tmp/h1 /tmp/h2: file exists', code: 4 });
    expect(await call('ext_openssh_hardlink', 'tmp/nosuch', 'tmp/h3')).toEqual({
      error: 'link tmp/nosuch tmp/h3: no such file or directory',
      code: 2,
    });
    expect(await call('ext_openssh_hardlink', '/tmp', '/tmp/h4')).toEqual({ error: 'link /tmp /tmp/h4: operation not permitted', code: 4 });
  });

  it("answers statvfs with the mount's figures (the beds' /dev tmpfs, /proc), and a missing path with the errno alone", async () => {
    expect(await call('ext_openssh_statvfs', '/dev')).toEqual({
      f_bsize: 4096,
      f_frsize: 4096,
      f_blocks: 123,
      f_bfree: 122,
      f_bavail: 122,
      f_files: 3085448,
      f_ffree: 3085428,
      f_favail: 3085428,
      f_sid: 0,
      f_flag: 4128,
      f_namemax: 255,
    });
    expect(await call('ext_openssh_statvfs', '/proc')).toMatchObject({ f_blocks: 0, f_files: 0, f_flag: 4142, f_namemax: 255 });
    expect(await call('ext_openssh_statvfs', '/')).toMatchObject({ f_bsize: 4096, f_flag: 4128, f_namemax: 255 });
    expect(await call('ext_openssh_statvfs', '/nosuch')).toEqual({ error: 'no such file or directory', code: 2 });
  });

  it('answers an extension it does not serve (fsync) "operation unsupported"', async () => {
    client._extensions['fsync@openssh.com'] = '1';
    expect(await call('ext_openssh_fsync', Buffer.from([0, 0, 0, 1]))).toEqual({ error: 'operation unsupported', code: 8 });
  });
});
