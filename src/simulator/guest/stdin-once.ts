import type { CommandContext } from 'just-bash';
import { stdinBytes } from './program-host.js';

const read = new WeakSet<CommandContext>();

/**
 * A program's stdin for an operand `-`: all of it the first time, nothing after (the stream is at
 * its end), as `cut f - -` reads it once.
 */
export function stdinOnce(ctx: CommandContext): Buffer {
  if (read.has(ctx)) return Buffer.alloc(0);
  read.add(ctx);
  return stdinBytes(ctx);
}
