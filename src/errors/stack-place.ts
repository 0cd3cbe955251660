import { fileURLToPath } from 'node:url';

/** A place in a source file, as a stack frame names it: 1-based line and column. */
export interface StackPlace {
  file: string;
  line: number;
  column: number;
}

/**
 * The frames of a stack that name a file by its absolute path or file: URL, in order (frames of
 * node's internals and anonymous code are left out). With source maps on, as while rule files
 * load, a compiled rule file's frames name the .ts file as written.
 */
export function stackPlaces(stack: string | undefined): StackPlace[] {
  const out: StackPlace[] = [];
  for (const frame of (stack ?? '').split('\n').slice(1)) {
    const m = /\(?((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(frame.trim());
    if (m) out.push({ file: m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!, line: Number(m[2]), column: Number(m[3]) });
  }
  return out;
}
