import { main } from '../../src/cli/entry.js';

/** What one `reflex` run printed and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `reflex <args>` in this process through main() (as bin/reflex.js does), with stdout and
 * stderr captured and these environment variables set for the run (an empty string unsets one).
 */
export async function reflexInProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const writes = { out: process.stdout.write, err: process.stderr.write };
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const capture = (into: string[]) =>
    ((chunk: string | Uint8Array) => (
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')),
      true
    )) as typeof process.stdout.write;
  for (const [k, v] of Object.entries(env)) {
    if (v === '') delete process.env[k];
    else process.env[k] = v;
  }
  process.exitCode = undefined;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  try {
    await main([process.execPath, 'reflex', ...args]);
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, stdout: out.join(''), stderr: err.join('') };
}
