import { isUtf8 } from 'node:buffer';
import type { ExecResult } from 'just-bash';

/**
 * A program's output of bytes (head, tail -c, tar -O, zcat ...): passed on as they are through pipes
 * and redirections, and the command's output made raw (byte for byte) only when they are not UTF-8.
 * just-bash hands the command's output back as text, UTF-8 decoded, and the raw path writes each
 * character as one byte: UTF-8 text through it would lose its multi-byte characters.
 */
export function bytesOutput(rawOutput: () => void, data: Buffer, stderr = '', exitCode = 0): ExecResult {
  if (!isUtf8(data)) rawOutput();
  return { stdout: data.toString('latin1'), stderr, exitCode, stdoutKind: 'bytes' };
}
