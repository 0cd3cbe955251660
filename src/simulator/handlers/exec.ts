import { posix } from 'node:path';
import { StatusCode } from '../../client/status-code.js';
import { asyncOp, SimHttpError, type SimResponse } from '../envelope.js';
import { finishExec, type TerminalStarter } from '../exec/exec-sockets.js';
import type { CompletionEntry } from '../exec/line-completion.js';
import { TerminalSession } from '../exec/terminal-session.js';
import { defaultTerminalSize, type TerminalSize } from '../guest/busybox-tty.js';
import type { GuestCommand, GuestResult, Guests } from '../guest/guests.js';
import type { SimInstance } from '../instance-model.js';
import type { SimRequest } from '../router.js';
import { bodyObject, countCall, instanceOf, instanceResources, stringMap, type InstanceFamily } from './common.js';

/**
 * POST …/exec. The command runs in the instance's guest (guest/guests.ts: a shell over its
 * filesystem). With `wait-for-websocket` the operation is of class websocket and carries the
 * secrets of its sockets (fds 0, 1, 2 and control; 0 and control when interactive); it runs once
 * the client has connected them (and stdin ended) and ends with `{"return": code}`. Without, it
 * runs at once with stdin at end of file (class task). `cwd`, `user` and `group` (extension
 * container_exec_user_group_cwd) are where and as whom it runs; an interactive command runs on a
 * pty of the request's `width` x `height` (80x25 unless both are given), which `stty` reads and
 * the client's window-resize messages change. HOME and USER are set for root
 * only, as the daemon does. With `record-output` (and no websockets) stdout and stderr are kept as
 * log files of the instance, named in the operation's `output` (handlers/instance-logs.ts).
 */
export function exec(req: SimRequest, family: InstanceFamily): SimResponse {
  const { ctx } = req;
  const inst = instanceOf(req, family);
  const body = bodyObject(req);
  const command = Array.isArray(body.command) ? body.command.map(String) : [];
  if (command.length === 0) throw new SimHttpError(400, 'Command cannot be empty');
  if (!inst.isActive) throw new SimHttpError(400, 'Instance is not running');
  if (inst.statusCode === StatusCode.Frozen) throw new SimHttpError(400, 'Instance is frozen');
  countCall(req, inst, 'exec');
  const user = typeof body.user === 'number' ? body.user : undefined;
  const environment: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    LANG: 'C.UTF-8',
    ...(user ? {} : { HOME: '/root', USER: 'root' }),
    ...(stringMap(body.environment, 'environment') ?? {}),
  };
  const waitForWs = body['wait-for-websocket'] === true;
  const interactive = body.interactive === true;
  // As the daemon: recorded only when the output does not go to websockets.
  const recordOutput = body['record-output'] === true && !waitForWs;
  const metadata: Record<string, unknown> = { command, environment, interactive };
  // The pty of an interactive exec: the request's size when it gives both, else the daemon's default.
  const size: TerminalSize = { ...defaultTerminalSize };
  const { width, height } = body;
  if (typeof width === 'number' && typeof height === 'number' && width > 0 && height > 0) Object.assign(size, { cols: width, rows: height });
  const secrets: Record<string, string> = {};
  if (waitForWs) {
    for (const fd of interactive ? ['0', 'control'] : ['0', '1', '2', 'control']) secrets[fd] = ctx.ids.secret();
    metadata.fds = { ...secrets };
  }
  const op = ctx.actions.runOperation(
    inst,
    {
      description: 'Executing command',
      class: waitForWs ? 'websocket' : 'task',
      resources: instanceResources(req, inst, '', 'exec'),
      // A task (no websockets) starts without metadata and ends with `{output?, return}`, as on both daemons.
      ...(waitForWs ? { metadata } : {}),
    },
    undefined,
    (op) => {
      ctx.lifecycle.emit(inst, 'instance-exec', { context: { command } });
      const guestCommand: GuestCommand = {
        argv: command,
        // The guest's init passes `container=lxc` to every process.
        environment: { container: 'lxc', ...environment },
        ...(typeof body.cwd === 'string' && body.cwd ? { cwd: body.cwd } : {}),
        ...(user !== undefined ? { user } : {}),
        ...(typeof body.group === 'number' ? { group: body.group } : {}),
        ...(interactive ? { terminal: size } : {}),
      };
      // On a terminal the exec is a session: a bare shell's (`lxc exec c -- sh`), or another
      // program's (`su`, `sh -c sh`), whose first shell started on the terminal reads its lines.
      const bare = isBareShell(command);
      const terminal: TerminalStarter = (io) =>
        new TerminalSession({
          environment: guestCommand.environment,
          cwd: guestCommand.cwd ?? (user ? '/' : '/root'),
          root: !user,
          size,
          signal: io.signal,
          ...(bare ? {} : { signals: io.signals }),
          write: io.write,
          end: io.end,
          list: (dir) => listDirectory(ctx.guests, inst, dir),
          parser: () => ctx.guests.parser(),
          // One program for the session: `sh` on its terminal, reading the lines the session hands it, or the exec's own.
          runShell: (shell) =>
            ctx.guests.run(inst, {
              ...guestCommand,
              ...(bare ? { argv: ['sh'] } : { signals: io.signals }),
              terminal: size,
              signal: io.signal,
              stdin: Buffer.alloc(0),
              ...shell,
            }),
        });
      // `sh` alone without a terminal reads its script from stdin as it comes, as busybox's ash does.
      const readsScript = command.length === 1 && bare;
      if (waitForWs)
        ctx.execSockets.open(op, secrets, interactive, (io) => ctx.guests.run(inst, { ...guestCommand, ...io }), terminal, size, readsScript);
      else {
        const started = Date.now();
        void ctx.guests.run(inst, guestCommand).then(
          (result) => {
            const output = recordOutput ? { output: recordedOutput(req, family, inst, op.id, result) } : {};
            setTimeout(() => finishExec(op, result.code, output), Math.max(0, ctx.opts.timings.taskMs - (Date.now() - started))).unref();
          },
          (err: unknown) => op.fail((err as Error).message ?? String(err)),
        );
      }
    },
  );
  return asyncOp(op.url, ctx.ops.render(op));
}

/** `sh` or `ash` with no script (the beds' busybox image has no `bash`): what `lxc exec c -- sh` starts, a shell reading its terminal. */
function isBareShell(command: readonly string[]): boolean {
  const [program, ...args] = command;
  return /^(?:\/(?:usr\/)?bin\/)?(?:sh|ash)$/.test(program ?? '') && args.every((a) => a === '-i' || a === '-l' || a === '--login');
}

/** A directory of the guest for Tab completion, each name with whether it is (or links to) a directory. */
async function listDirectory(guests: Guests, inst: SimInstance, dir: string): Promise<CompletionEntry[] | undefined> {
  const fs = await guests.fs(inst);
  try {
    const names = await fs.list(dir);
    return await Promise.all(
      names.map(async (name) => {
        const path = posix.join(dir, name);
        const st = await fs.memory.stat(path).catch(() => undefined);
        return { name, directory: st?.isDirectory === true };
      }),
    );
  } catch {
    return undefined;
  }
}

/** Keeps a finished command's output as the instance's exec log files; their URLs by fd. */
function recordedOutput(req: SimRequest, family: InstanceFamily, inst: SimInstance, opId: string, result: GuestResult): Record<string, string> {
  const [out, err] = req.ctx.execRecords.record(inst, opId, result.stdout, result.stderr);
  const dir = `/1.0/${family.prefix}/${inst.name}/logs/${req.ctx.opts.revision === 'later' ? 'exec-output/' : ''}`;
  return { '1': `${dir}${out}`, '2': `${dir}${err}` };
}
