import { z } from 'zod';
import { ApiError } from '../client/api-error.js';
import type { ExecResult, ExecSession } from '../client/exec.js';
import { durationMs } from '../config/duration.js';
import { ReflexError } from '../errors/reflex-error.js';
import { OWN_OPERATION_MAX_MS } from '../events/intent.js';
import type { ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';

/**
 * The longest timeout a rule may give: the executor waits for one of its own operations (and
 * takes the instance's events as its own) for at most OWN_OPERATION_MAX_MS, and a killed
 * command's operation needs a few seconds more to end.
 */
export const EXEC_TIMEOUT_MAX_MS = OWN_OPERATION_MAX_MS - 20_000;

/** Params of the exec action. */
export const execParamsSchema = z.strictObject({
  /** Program and arguments, run without a shell unless it is one: `['sh', '-c', 'systemctl restart nginx']`. */
  command: z.array(z.string()).min(1),
  /** After this long the command is sent SIGKILL and the action fails with EXEC_TIMEOUT. Default 30s, at most 100s. */
  timeout: durationMs(z.number().int().min(1).max(EXEC_TIMEOUT_MAX_MS)).default(30_000),
  /** Added to the daemon's environment (PATH, HOME, USER, LANG, the instance's `environment.*`). Default none. */
  environment: z.record(z.string(), z.string()).default({}),
  /** UID to run as. Default root. */
  user: z.number().int().min(0).optional(),
  /** GID to run as. Default root. */
  group: z.number().int().min(0).optional(),
  /** Working directory. Default the daemon's (`/root` for root). */
  cwd: z.string().min(1).optional(),
  /** Exit codes that count as success. Default [0]. */
  expect: z.array(z.number().int().min(0).max(255)).min(1).default([0]),
  /** Bytes of stdout and of stderr kept in the audit, each (the first ones). Default 8192, at most 65536. */
  maxOutputBytes: z.number().int().min(0).max(65_536).default(8192),
});

/**
 * Runs a command inside the instance through the exec API, non-interactive (stdin closed), under
 * the instance's lock like any action that touches it. The audit gets the command, its exit code,
 * duration, the first `maxOutputBytes` of stdout and stderr (redacted as every record is) and
 * whether it timed out. An exit code outside `expect` fails with EXEC_FAILED, a timeout with
 * EXEC_TIMEOUT; neither is retried. The exec is Reflex's own operation: its `instance-exec`
 * event triggers no rule.
 */
export const execAction = builtinAction({
  name: 'exec',
  describe: 'run a command in the instance (params: command, timeout? = 30s, environment?, user?, group?, cwd?, expect? = [0])',
  params: execParamsSchema,
  async run(ctx): Promise<ActionOutcome> {
    const p = ctx.params;
    const shown = p.command.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ');
    let session: ExecSession | undefined;
    let failure: unknown;
    try {
      session = await ctx.client.exec(
        ctx.instance,
        { command: p.command, environment: p.environment, user: p.user, group: p.group, cwd: p.cwd },
        { timeoutMs: p.timeout, maxOutputBytes: p.maxOutputBytes },
      );
      await session.operation.wait();
    } catch (err) {
      // Refused before it ran: the daemon's error is the action's.
      if (!session) throw err;
      // An exit code of 126 or 127 fails the operation; it is still an exit code.
      if (!(err instanceof ApiError && err.code === 'OPERATION_FAILED') && !session.timedOut) failure = err;
    }
    const res = await session!.result();
    await ctx.audit({
      type: 'call',
      summary: describe(shown, res),
      action: 'exec',
      command: p.command,
      exitCode: res.exitCode ?? null,
      durationMs: res.durationMs,
      timedOut: res.timedOut,
      stdout: res.stdout,
      stderr: res.stderr,
      stdoutTruncated: res.stdoutTruncated,
      stderrTruncated: res.stderrTruncated,
      operationId: res.operation.id,
    });
    if (res.timedOut)
      throw new ReflexError(
        'EXEC_TIMEOUT',
        `${shown} timed out after ${p.timeout} ms and was killed (SIGKILL)${res.exitCode !== undefined ? `; exit code ${res.exitCode}` : ''}`,
      );
    if (failure) throw failure;
    if (res.exitCode === undefined)
      throw new ReflexError(
        'EXEC_FAILED',
        `${shown}: the daemon reported no exit code (operation ${res.operation.status}${res.operation.err ? `: ${res.operation.err}` : ''})`,
      );
    if (!p.expect.includes(res.exitCode))
      throw new ReflexError(
        'EXEC_FAILED',
        `${shown} exited with ${res.exitCode} (expected ${p.expect.join('|')})${res.operation.err ? `: ${res.operation.err}` : ''}`,
      );
    return { result: 'done', summary: `${shown} exited with ${res.exitCode} in ${res.durationMs} ms`, operationId: res.operation.id };
  },
});

function describe(shown: string, res: ExecResult): string {
  const how = res.timedOut ? `timed out, killed${res.exitCode !== undefined ? ` (exit ${res.exitCode})` : ''}` : `exit ${res.exitCode ?? 'unknown'}`;
  const trunc = res.stdoutTruncated || res.stderrTruncated ? ' (output truncated)' : '';
  return `exec ${shown}: ${how} after ${res.durationMs} ms${trunc}`;
}
