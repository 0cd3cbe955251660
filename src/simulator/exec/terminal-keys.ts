/** A key as the line editor reads it: one character, or a named key from its escape sequence. */
export type EditorKey =
  | { char: string }
  | {
      name:
        | 'up'
        | 'down'
        | 'left'
        | 'right'
        | 'home'
        | 'end'
        | 'delete'
        | 'word-left'
        | 'word-right'
        | 'delete-word-left'
        | 'delete-word-right'
        | 'ignored';
    };

/**
 * The escape sequences busybox 1.35's `read_key` knows: Alt with a key (ESC and the key, as a
 * terminal sends it: Alt-b and Alt-f move by words as Ctrl-Left/Right do, Alt-d and
 * Alt-Backspace delete a word), and the CSI and SS3 forms of the cursor keys.
 */
const sequences: Record<string, EditorKey> = {
  '\x1b\x7f': { name: 'delete-word-left' },
  '\x1b\b': { name: 'delete-word-left' },
  '\x1bd': { name: 'delete-word-right' },
  '\x1bf': { name: 'word-right' },
  '\x1bb': { name: 'word-left' },
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
  '\x1b[1;5C': { name: 'word-right' },
  '\x1b[1;5D': { name: 'word-left' },
  '\x1b[1;3C': { name: 'word-right' },
  '\x1b[1;3D': { name: 'word-left' },
};

/** What `read_key` keeps after an escape it does not know (KEYCODE_BUFFER_SIZE, less its count byte). */
const unknownMaxBytes = 15;

/**
 * The next key at the start of `input` and how many characters it took, as busybox's `read_key`
 * reads it. After an escape it takes what comes within 50 ms of the byte before, until that is a
 * sequence it knows; what is not one is decided only when nothing more comes (`quiet`: 50 ms went
 * by since `input`'s last byte) or 15 bytes came: none or one byte, the escape stands alone and is
 * ignored and the byte is a key of its own (ESC then `x` types `x`); more, they are dropped with
 * the escape (busybox's 16-byte buffer: past 15, the rest are keys again). Undefined: wait.
 */
export function nextKey(input: string, quiet = false): { key: EditorKey; length: number } | undefined {
  if (input[0] !== '\x1b') {
    const char = String.fromCodePoint(input.codePointAt(0)!);
    return { key: { char }, length: char.length };
  }
  for (const [seq, key] of Object.entries(sequences)) if (input.startsWith(seq)) return { key, length: seq.length };
  let bytes = 0;
  let length = 1;
  for (const char of input.slice(1)) {
    const size = Buffer.byteLength(char);
    if (bytes + size > unknownMaxBytes) break;
    bytes += size;
    length += char.length;
  }
  const full = length < input.length || bytes === unknownMaxBytes;
  if (!quiet && !full) return undefined;
  return { key: { name: 'ignored' }, length: bytes <= 1 ? 1 : length };
}
