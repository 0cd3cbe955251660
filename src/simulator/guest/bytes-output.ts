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

/** After a program that wrote bytes without saying whether they were raw: raw only if they are not UTF-8. */
export function rawUnlessUtf8(rawOutput: () => void, result: ExecResult): ExecResult {
  if (result.stdoutKind === 'bytes' && !isUtf8(Buffer.from(result.stdout, 'latin1'))) rawOutput();
  return result;
}
