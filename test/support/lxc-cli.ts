import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { lxdSocketPath } from './daemon-bed.js';

/** What one `lxc` run printed and how it exited. */
export interface LxcResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * The real `lxc` client (or `incus`, with `client: 'incus'`) with a private configuration
 * directory (LXD_CONF / INCUS_CONF), so remotes and the client certificate it generates never
 * touch the user's own config. For `lxc`, the `local` remote is the real daemon's socket when
 * there is one.
 */
export class LxcCli {
  readonly confDir = mkdtempSync(join(tmpdir(), 'reflex-lxc-conf-'));

  constructor(private readonly opts: { client?: 'lxc' | 'incus' } = {}) {}

  /** Runs `lxc args…` with an empty stdin (lxc reads YAML from a non-terminal stdin). */
  run(args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<LxcResult> {
    const client = this.opts.client ?? 'lxc';
    const env = this.env();
    // Input comes from a file: a client that opens /dev/stdin itself (`incus file edit`) cannot open
    // the socket node's pipes are (ENXIO); without input, an empty pipe as before.
    let inputFd: number | undefined;
    if (opts.input !== undefined) {
      const file = join(this.confDir, 'stdin');
      writeFileSync(file, opts.input);
      inputFd = openSync(file, 'r');
    }
    return new Promise((resolve, reject) => {
      const child = spawn(client, args, { env, stdio: [inputFd ?? 'pipe', 'pipe', 'pipe'] });
      if (inputFd !== undefined) closeSync(inputFd);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ stdout, stderr, code: code ?? (signal ? 128 : -1) });
      });
      // A client that exits before reading its stdin (an argument error, a quick refusal) closes the
      // pipe: EPIPE on the write is then no failure of the run (its exit code says what happened).
      child.stdin?.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE') reject(err);
      });
      child.stdin?.end('');
    });
  }

  /** Starts `lxc args…` with its stdin, stdout and stderr as pipes, for a test that talks with it as it runs. */
  spawn(args: string[]): ChildProcessWithoutNullStreams {
    return spawn(this.opts.client ?? 'lxc', args, { env: this.env() });
  }

  /** The client's environment: its private configuration directory, LXD's socket. */
  private env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C' };
    if (this.opts.client === 'incus') env.INCUS_CONF = this.confDir;
    else {
      env.LXD_CONF = this.confDir;
      const socket = lxdSocketPath();
      if (socket) env.LXD_SOCKET = socket;
      else delete env.LXD_SOCKET;
    }
    return env;
  }

  /** Like run, but throws with stderr unless the exit code is 0; returns stdout. */
  async ok(args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<string> {
    const res = await this.run(args, opts);
    if (res.code !== 0) throw new Error(`${this.opts.client ?? 'lxc'} ${args.join(' ')} exited ${res.code}: ${res.stderr.trim()}`);
    return res.stdout;
  }

  /** Removes the configuration directory. */
  close(): void {
    rmSync(this.confDir, { recursive: true, force: true });
  }
}

/** Whether a client (`lxc` by default) is on PATH (looked up without running it: a first run writes a config dir). */
export function lxcInstalled(client: 'lxc' | 'incus' = 'lxc'): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, client)));
}
