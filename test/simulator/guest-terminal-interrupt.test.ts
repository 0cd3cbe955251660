import { describe, expect, it } from 'vitest';
import type { TerminalInput } from '../../src/simulator/guest/busybox-tty.js';
import { Guests } from '../../src/simulator/guest/guests.js';
import { SimInstance } from '../../src/simulator/instance-model.js';

/**
 * The terminal as a program that reads it meets a Ctrl-C: the pty's SIGINT kills the program
 * wherever it is, in a read or between two (busybox's `cat` writing the line it read), so a program
 * the simulator runs again on each line typed reads nothing more once a Ctrl-C came after it started.
 * The terminal here is a stand-in whose first read gets a line with a Ctrl-C typed right after it.
 */
function terminalWithInterruptAfterFirstLine(): TerminalInput & { reads: number } {
  return {
    reads: 0,
    interrupts: 0,
    read() {
      this.reads++;
      if (this.reads > 1) return Promise.resolve('');
      (this as { interrupts: number }).interrupts++;
      return Promise.resolve('y\n');
    },
    unread() {},
  };
}

describe('a program reading the terminal and Ctrl-C', () => {
  it('a Ctrl-C typed between two reads ends the program: it reads no more, what it read stays written, the line goes no further', async () => {
    const guests = new Guests();
    const inst = new SimInstance('c', 'default', 'container', new Date(0).toISOString(), {});
    const tty = terminalWithInterruptAfterFirstLine();
    const written: string[] = [];
    await guests.run(inst, {
      argv: ['sh', '-c', 'cat > /tmp/f; echo "after $?"'],
      environment: {},
      terminal: { rows: 25, cols: 80 },
      stdin: Buffer.alloc(0),
      tty,
      output: (part) => written.push(part.stdout.toString(), part.stderr.toString()),
    });
    expect(tty.reads).toBe(1);
    expect(written.join('')).not.toContain('after');
    const file = await guests.run(inst, { argv: ['cat', '/tmp/f'], environment: {}, stdin: Buffer.alloc(0) });
    expect(file.stdout.toString()).toBe('y\n');
  });
});
