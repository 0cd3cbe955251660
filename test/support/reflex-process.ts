import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/reflex.js', import.meta.url));
/** Stops the process when this one dies (its fd 3 is a pipe to us): see exit-with-parent.cjs. */
const exitWithParent = ['--require', fileURLToPath(new URL('./exit-with-parent.cjs', import.meta.url))];
/** stdin ignored, stdout and stderr read, fd 3 the pipe exit-with-parent.cjs watches. */
const stdio: ['ignore', 'pipe', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe', 'pipe'];

/** A `reflex` CLI process started by a test, with its JSON log lines collected. */
export interface ReflexProcess {
  child: ChildProcess;
  logs: Record<string, unknown>[];
  /** Resolves when a log line's msg contains `text`. */
  waitForLog(text: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves once it has logged both that its event stream is connected and that it runs (`reflex run`). */
  waitUntilWatching(): Promise<void>;
  /** SIGTERM and wait for exit (SIGKILL after 10 s). */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** Where to find `reflex` and where to run it: default the checkout's bin/reflex.js, from the current directory. */
export interface ReflexCommand {
  /** An installed `reflex` (e.g. PREFIX/bin/reflex). */
  bin?: string;
  cwd?: string;
  /** Run with exactly the given environment instead of this process's plus it (an image's ENV). */
  cleanEnv?: boolean;
}

/**
 * Where a `reflex` started here keeps its state (the files history store, src/config/history-dir.ts)
 * when the caller's environment names no state folder: the checkout's .tmp/state, never the user's
 * home (the chaos runs and benches start hundreds of processes; a test run sets its own).
 */
function scratchState(): Record<string, string> {
  return process.env.XDG_STATE_HOME || process.env.STATE_DIRECTORY ? {} : { XDG_STATE_HOME: resolve('.tmp', 'state') };
}

/** Starts `node bin/reflex.js <args>` (or an installed `reflex`) exactly as a user would run it. */
export function startReflexProcess(args: string[], env: Record<string, string> = {}, command: ReflexCommand = {}): ReflexProcess {
  // REFLEX_CPU_PROF=DIR: each process writes a V8 CPU profile there when it exits (to see where a bench's CPU goes).
  const prof = process.env.REFLEX_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.REFLEX_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, ...exitWithParent, command.bin ?? bin, ...args], {
    env: command.cleanEnv ? env : { ...scratchState(), ...process.env, ...env },
    cwd: command.cwd,
    stdio,
  });
  const logs: Record<string, unknown>[] = [];
  const waiters: { text: string; resolve: (l: Record<string, unknown>) => void }[] = [];
  let buf = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { msg: line };
      }
      logs.push(parsed);
      for (const w of [...waiters]) {
        if (String(parsed.msg ?? '').includes(w.text)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(parsed);
        }
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    logs,
    waitForLog(text, timeoutMs = 60_000) {
      const found = logs.find((l) => String(l.msg ?? '').includes(text));
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () =>
            reject(
              new Error(`no log line "${text}" within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}; last logs: ${JSON.stringify(logs.slice(-5))}`),
            ),
          timeoutMs,
        );
        exited.then((code) => {
          clearTimeout(t);
          reject(new Error(`reflex exited (${code}) before logging "${text}"; stderr: ${stderr.slice(-2000)}`));
        });
        waiters.push({ text, resolve: (l) => (clearTimeout(t), resolve(l)) });
      });
    },
    async waitUntilWatching() {
      await this.waitForLog('event stream connected');
      await this.waitForLog('reflex running');
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs `reflex <args>` to completion and returns its output. */
export async function runReflex(
  args: string[],
  env: Record<string, string> = {},
  command: ReflexCommand = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...exitWithParent, command.bin ?? bin, ...args], {
    env: { ...scratchState(), ...process.env, ...env },
    cwd: command.cwd,
    stdio,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}
