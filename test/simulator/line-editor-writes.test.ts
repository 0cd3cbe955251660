import { describe, expect, it } from 'vitest';
import { LineEditor, LineHistory } from '../../src/simulator/exec/line-editor.js';

// busybox's line editor writes to a buffered stdout and flushes it before it reads the next key:
// a key's echo, the wrap after it and a redraw reach the terminal in one write. The simulator once
// wrote a wrapped key as `a` and then CR CR LF; a client that waits for a key's echo before the
// next key, or before a resize, then ran one key ahead of the editor (a CI run resized the window
// before the last key was taken, and the redraw lacked it).
describe("the simulator's line editor", () => {
  function editor(width: number): { editor: LineEditor; writes: string[] } {
    const writes: string[] = [];
    return { editor: new LineEditor('~ # ', width, new LineHistory(), (text) => writes.push(text)), writes };
  }

  it('writes the prompt in one write', () => {
    const { writes } = editor(20);
    expect(writes).toEqual(['~ # ']);
  });

  it("writes a key's echo and the wrap at the last column in one write", () => {
    const { editor: e, writes } = editor(10);
    for (const char of 'echo a') e.key({ char });
    expect(writes.slice(1)).toEqual(['e', 'c', 'h', 'o', ' ', 'a\r\r\n']);
  });

  it('writes a key typed inside the line with the rest of the line and the cursor move back in one write', () => {
    const { editor: e, writes } = editor(40);
    for (const char of 'abcd') e.key({ char });
    e.key({ name: 'left' });
    e.key({ name: 'left' });
    writes.length = 0;
    e.key({ char: 'x' });
    expect(writes).toEqual(['xcd\b\b']);
  });

  it('writes the redraw after a resize in one write', () => {
    const { editor: e, writes } = editor(10);
    for (const char of 'echo 0123') e.key({ char });
    writes.length = 0;
    e.setWidth(30);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/echo 0123\x1b\[J$/);
  });
});
