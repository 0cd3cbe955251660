import { request } from 'undici';
import type WebSocket from 'ws';
import { expect, it } from 'vitest';
import type { ApiError } from '../../src/client/api-error.js';
import { webSocketClass } from '../../src/client/web-socket.js';
import { until } from '../support/wait.js';
import { conformance, launchPerTest, lxdConsoleCrash, type ConformanceTarget } from './targets.js';

/**
 * One client attached to an instance's console (`POST …/console`, then its control socket and its
 * data socket, in that order, as `lxc console` connects them): what the data socket brought, in
 * order, and where its end (an empty text message) came.
 */
class Console {
  /** What the data socket brought. */
  all = '';
  /** What {@link ready} showed, which {@link text} leaves out. */
  probe = '';
  /** Where in {@link text} the data socket's end came, if it came. */
  endedAt: number | undefined;
  /** The close code of each socket, once it closed. */
  readonly closed: { data?: number; control?: number } = {};

  private data!: WebSocket;

  private constructor(
    readonly op: string,
    private readonly control: WebSocket,
  ) {}

  static async attach(t: ConformanceTarget, name: string, body: Record<string, unknown> = {}): Promise<Console> {
    const res = await t.client.transport.request('POST', `/1.0/instances/${name}/console`, {
      body: { width: 80, height: 24, type: 'console', ...body },
    });
    const op = res.envelope.metadata as { id: string; metadata: { fds: Record<string, string> } };
    const control = await open(t, op.id, op.metadata.fds.control!);
    const console = new Console(op.id, control);
    control.once('close', (code) => (console.closed.control = code));
    // The data's listeners go on before it opens: a daemon may send in the frames that follow the handshake.
    console.data = await open(t, op.id, op.metadata.fds['0']!, (data) => {
      data.on('message', (bytes: Buffer, binary) => {
        if (binary) console.all += bytes.toString('latin1');
        else console.endedAt ??= console.text.length;
      });
      data.once('close', (code) => (console.closed.data = code));
    });
    return console;
  }

  /** What the console showed after {@link ready}'s probe. */
  get text(): string {
    return this.all.slice(this.probe.length);
  }

  /**
   * Waits until the daemon has attached the console, as a client can tell: keys typed before that
   * are lost on the daemons (their sockets are open before forkconsole has attached liblxc's
   * console), so `z` is typed until one is echoed, each time after the last one had half a second
   * to come back. Then Ctrl-U and Enter: the line is erased, with what it held before the `z`s (on
   * Incus the `ESC c` of the client a forced attach drove off), and ended; once the Enter's echo is
   * out, everything typed so far is, and the probe is what the console showed.
   */
  async ready(): Promise<void> {
    await until(
      'the console to echo a z typed',
      async () => {
        this.type('z');
        return until('the echo of z', () => this.all.includes('z'), 500).catch(() => false);
      },
      15_000,
    );
    this.type('\x15\r');
    await until('the echo of the Enter after the probe', () => this.all.endsWith('\r\r\r\n'));
    this.probe = this.all;
  }

  /** Keys typed at the console, in one message. */
  type(keys: string): void {
    this.data.send(Buffer.from(keys, 'latin1'));
  }

  /** Waits until what the console showed ends with `tail`. */
  shows(tail: string): Promise<true> {
    return until(`the console to show ${JSON.stringify(tail)} (it showed ${JSON.stringify(this.text)})`, () => this.text.endsWith(tail), 15_000);
  }

  /** Leaves the console as `<ctrl>+a q` does: the control socket closes; resolves once the data socket closed too. */
  async detach(): Promise<void> {
    this.control.close();
    await until('the data socket to close', () => this.closed.data !== undefined, 15_000);
  }

  /** Drops both sockets (a test's cleanup). */
  drop(): void {
    this.control.terminate();
    this.data.terminate();
  }
}

/** Opens an operation's websocket at the address the target's client uses for its events; `made` sees it before it opens. */
function open(t: ConformanceTarget, op: string, secret: string, made: (ws: WebSocket) => void = () => undefined): Promise<WebSocket> {
  const endpoint = t.client.eventsEndpoint([]);
  const url = endpoint.url.replace(/\/1\.0\/events\?.*$/, `/1.0/operations/${op}/websocket?secret=${secret}`);
  return new Promise((resolve, reject) => {
    const ws = new (webSocketClass())(url, { ...endpoint.options, perMessageDeflate: false });
    made(ws);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

interface ConsoleOperation {
  status: string;
  status_code: number;
  err: string;
  may_cancel: boolean;
}

async function operation(t: ConformanceTarget, id: string): Promise<ConsoleOperation> {
  return (await t.client.transport.request('GET', `/1.0/operations/${id}`)).envelope.metadata as ConsoleOperation;
}

async function sh(t: ConformanceTarget, name: string, script: string): Promise<void> {
  const res = await (await t.client.exec(name, { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 });
  expect(res.exitCode).toBe(0);
}

/**
 * What the console's ring got, read until `done` holds for it, or for 10 s (the daemons' pty hands
 * bytes to the ring after the command that wrote them ended: shapes-and-wording.test.ts); the
 * caller compares what it gave.
 */
async function ring(t: ConformanceTarget, name: string, done: (text: string) => boolean): Promise<string> {
  let text = '';
  await until(`the console log to give all (it gave ${JSON.stringify(text)})`, async () => {
    const res = await request(`${t.client.transport.activeOrigin}/1.0/instances/${name}/console`, { dispatcher: t.client.transport['agent'] });
    const body = Buffer.from(await res.body.arrayBuffer());
    if (res.headers['content-type'] === 'application/octet-stream') text += body.toString('latin1');
    return done(text);
  }).catch(() => undefined);
  return text;
}

await conformance(
  'the interactive console (POST …/console): attach, type, detach (issue #41)',
  (target) => {
    const launch = launchPerTest(target);

    it("shows what the guest writes to its console and echoes what is typed through the console's pty, from the attach on; detaching ends the operation in Success", async () => {
      const t = target();
      const name = await launch();
      const earlier = t.revision === 'earlier';
      await sh(t, name, 'echo before > /dev/console');
      const c = await Console.attach(t, name);
      try {
        await c.ready();
        // Two more ptys lie between the console and the daemon: each newline reaches the client as \r\r\n.
        await sh(t, name, "echo during > /dev/console; printf 'a\\nb' > /dev/console");
        await c.shows('during\r\r\r\na\r\r\r\nb');
        // n_tty: the erase echoed as \b \b, Enter as a newline, a control key as ^X, Ctrl-C as ^C,
        // Ctrl-D as nothing, an escape sequence as ^[ and the rest.
        c.type('ab\x7fc\r');
        await c.shows('ab\b \bc\r\r\r\n');
        c.type('x');
        await c.shows('x');
        c.type('\x03');
        await c.shows('x^C');
        c.type('y\x04');
        await c.shows('y');
        c.type('\x1b[A');
        await c.shows('y^[[A');
        expect(c.text).toBe('during\r\r\r\na\r\r\r\nbab\b \bc\r\r\r\nx^Cy^[[A');
        expect(await operation(t, c.op)).toMatchObject({ status: 'Running', may_cancel: !earlier });
        await c.detach();
        // LXD's forkconsole leaves its terminal with \n\r; Incus sends nothing more.
        expect(c.text).toBe(`during\r\r\r\na\r\r\r\nbab\b \bc\r\r\r\nx^Cy^[[A${earlier ? '\n\r' : ''}`);
        // No end of the stream before the drop (Incus 6.0.4 sends one now and then: its end of the
        // console races the drop).
        expect(c.endedAt).toBeOneOf(t.name === 'incus' ? [undefined, c.text.length] : [undefined]);
        await until('the console operation to end', async () => (await operation(t, c.op)).status !== 'Running', 15_000);
        expect(await operation(t, c.op)).toMatchObject({ status: 'Success', err: '', may_cancel: false });
        // The ring got all of it (not what went before the attach twice), and liblxc's reset of the
        // terminal forkconsole left (ESC c), echoed. On the daemons that comes after the detach, with
        // nothing the API answers to tell it has come but its bytes, and not always whole (runs kept
        // `^[` alone, or nothing, on both): a daemon's ring may end without it or with part of it;
        // the simulator's is exact.
        const seen = `before\r\n${c.probe.replace(/\r\r\n/g, '\n')}during\r\na\r\nbab\b \bc\r\nx^Cy^[[A`;
        if (t.name.startsWith('sim')) expect(await ring(t, name, (text) => text.length >= seen.length + 3)).toBe(`${seen}^[c`);
        else expect(await ring(t, name, (text) => text.startsWith(seen))).toBeOneOf([seen, `${seen}^[`, `${seen}^[c`]);
      } finally {
        c.drop();
      }
    });

    it('one client at a time: LXD fails a second attach at its connect, Incus refuses its POST unless it forces the first client off', async () => {
      const t = target();
      const name = await launch();
      const first = await Console.attach(t, name);
      let second: Console | undefined;
      try {
        await first.ready();
        if (t.revision === 'earlier') {
          second = await Console.attach(t, name);
          const refused = 'Error: Failed running forkconsole: "attaching to the container failed"\n\r';
          await until("the end of the second attach's data", () => second!.endedAt !== undefined, 15_000);
          expect(second.text).toBe(refused);
          expect(second.endedAt).toBe(refused.length);
          // The operation runs on until the client leaves (or writes): then it fails.
          expect(await operation(t, second.op)).toMatchObject({ status: 'Running' });
          await second.detach();
          expect(second.text).toBe(`${refused}\n\r`);
          await until('the second attach to fail', async () => (await operation(t, second!.op)).status !== 'Running', 15_000);
          expect(await operation(t, second.op)).toMatchObject({ status: 'Failure', err: 'write /dev/pts/ptmx: file already closed' });
          // The first client keeps the console.
          first.type('one\r');
          await first.shows('one\r\r\r\n');
        } else {
          await expect(Console.attach(t, name)).rejects.toMatchObject({
            status: 500,
            serverError: 'This console is already connected. Force is required to take it over.',
          } satisfies Partial<ApiError>);
          second = await Console.attach(t, name, { force: true });
          await second.ready();
          await until('the first client to be dropped', () => first.closed.data !== undefined && first.closed.control !== undefined, 15_000);
          expect(first.closed).toEqual({ data: 1006, control: 1006 });
          // Cancelled (401; the seed's later revision spells it "Canceled", Incus 6.0.4 "Cancelled"),
          // or on Incus Success, when its console's end wins the race with the cancel.
          expect((await operation(t, first.op)).status_code).toBeOneOf(t.name.startsWith('sim') ? [401] : [401, 200]);
          second.type('two\r');
          await second.shows('two\r\r\r\n');
          await second.detach();
          expect(await operation(t, second.op)).toMatchObject({ status: 'Success' });
        }
      } finally {
        first.drop();
        second?.drop();
      }
    });

    it("the guest's stop ends the data stream (LXD with \\r first); the operation runs until the client leaves, which LXD fails (its forkconsole is gone)", async () => {
      const t = target();
      const name = await launch();
      const c = await Console.attach(t, name);
      try {
        await c.ready();
        c.type('\x01');
        await c.shows('^A');
        await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 30_000 });
        await until('the end of the data stream', () => c.endedAt !== undefined, 15_000);
        expect(c.text).toBe(t.revision === 'earlier' ? '^A\r' : '^A');
        expect(c.endedAt).toBe(c.text.length);
        expect(await operation(t, c.op)).toMatchObject({ status: 'Running' });
        await c.detach();
        expect(c.text).toBe(t.revision === 'earlier' ? '^A\r\n\r' : '^A');
        await until('the console operation to end', async () => (await operation(t, c.op)).status !== 'Running', 15_000);
        expect(await operation(t, c.op)).toMatchObject(
          t.revision === 'earlier' ? { status: 'Failure', err: 'write /dev/pts/ptmx: file already closed' } : { status: 'Success', err: '' },
        );
      } finally {
        c.drop();
      }
    });

    it('refuses an unknown type, a VGA console of a container, a frozen instance and one that is not running', async () => {
      const t = target();
      const name = await launch();
      const post = (body: Record<string, unknown>, instance = name) =>
        t.client.transport.request('POST', `/1.0/instances/${instance}/console`, { body: { width: 80, height: 24, ...body } });
      await expect(post({ type: 'x' })).rejects.toMatchObject({ status: 400, serverError: 'Unknown console type "x"' } satisfies Partial<ApiError>);
      await expect(post({ type: 'vga' })).rejects.toMatchObject({
        status: 400,
        serverError: 'VGA console is only supported by virtual machines',
      } satisfies Partial<ApiError>);
      await expect(post({ type: 'console' }, 'rt-nosuch')).rejects.toMatchObject({ status: 404 } satisfies Partial<ApiError>);
      await (await t.client.changeState(name, { action: 'freeze' })).wait({ timeoutMs: 30_000 });
      await expect(post({ type: 'console' })).rejects.toMatchObject({ status: 400, serverError: 'Instance is frozen' } satisfies Partial<ApiError>);
      await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 30_000 });
      await expect(post({ type: 'console' })).rejects.toMatchObject({
        status: 400,
        serverError: 'Instance is not running',
      } satisfies Partial<ApiError>);
    });
  },
  { crashesLxd: lxdConsoleCrash },
);
