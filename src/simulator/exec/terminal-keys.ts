/** A key as the line editor reads it: one character, or a named key from its escape sequence. */
export type EditorKey =
  { char: string } | { name: 'up' | 'down' | 'left' | 'right' | 'home' | 'end' | 'delete' | 'ctrl-left' | 'ctrl-right' | 'ignored' };

/** The escape sequences busybox 1.35's `read_key` knows (CSI and SS3 forms); any other is dropped whole. */
const sequences: Record<string, EditorKey> = {
  '\x1bOA': { name: 'up' },
  '\x1bOB': { name: 'down' },
  '\x1bOC': { name: 'right' },
  '\x1bOD': { name: 'left' },
  '\x1bOH': { name: 'home' },
  '\x1bOF': { name: 'end' },
  '\x1b[A': { name: 'up' },
  '\x1b[B': { name: 'down' },
  '\x1b[C': { name: 'right' },
  '\x1b[D': { name: 'left' },
  '\x1b[H': { name: 'home' },
  '\x1b[F': { name: 'end' },
  '\x1b[1~': { name: 'home' },
  '\x1b[2~': { name: 'ignored' },
  '\x1b[3~': { name: 'delete' },
  '\x1b[4~': { name: 'end' },
  '\x1b[5~': { name: 'ignored' },
  '\x1b[6~': { name: 'ignored' },
  '\x1b[7~': { name: 'home' },
  '\x1b[8~': { name: 'end' },
  '\x1b[1;5C': { name: 'ctrl-right' },
  '\x1b[1;5D': { name: 'ctrl-left' },
  '\x1b[1;3C': { name: 'ctrl-right' },
  '\x1b[1;3D': { name: 'ctrl-left' },
};

/**
 * The next key at the start of `input` and how many characters it took; undefined when `input`
 * starts with part of an escape sequence whose rest has not come yet (`bareEscape`: it will not
 * come, the escape stands alone and is ignored, as busybox decides after 50 ms without input).
 */
export function nextKey(input: string, bareEscape = false): { key: EditorKey; length: number } | undefined {
  if (input[0] !== '\x1b') {
    const char = String.fromCodePoint(input.codePointAt(0)!);
    return { key: { char }, length: char.length };
  }
  for (const [seq, key] of Object.entries(sequences)) if (input.startsWith(seq)) return { key, length: seq.length };
  const partial = Object.keys(sequences).some((seq) => seq.length > input.length && seq.startsWith(input));
  if (partial && !bareEscape) return undefined;
  if (input.length === 1 || partial) return { key: { name: 'ignored' }, length: 1 };
  // An unknown sequence that came with the escape is read and dropped with it.
  // eslint-disable-next-line no-control-regex
  const csi = /^\x1b\[[0-9;?]*[\x40-\x7e]/.exec(input);
  return { key: { name: 'ignored' }, length: csi ? csi[0].length : input[1] === 'O' ? Math.min(3, input.length) : 2 };
}
