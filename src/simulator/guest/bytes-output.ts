import type { ExecResult } from 'just-bash';

/**
 * A program's output of bytes (head, tail -c, tar -O, zcat ...), one character a byte: passed on as
 * they are through pipes and redirections, and out of the exec byte for byte (guests.ts `ended`,
 * from each write's kind), where text goes out as UTF-8.
 */
export function bytesOutput(data: Buffer, stderr = '', exitCode = 0): ExecResult {
  return { stdout: data.toString('latin1'), stderr, exitCode, stdoutKind: 'bytes' };
}
