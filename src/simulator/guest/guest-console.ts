/** The paths of the container's console: `/dev/console` is devpts's first pty, `/dev/pts/0`, bound over it. */
export const consolePaths: ReadonlySet<string> = new Set(['/dev/console', '/dev/pts/0']);

/**
 * How much of the console's output liblxc's ring buffer keeps (`lxc.console.buffer.size = auto`,
 * 128 KiB): the beds answered 131,050 (LXD 5.0.2) and 131,052 (Incus 6.0.4) bytes after 333,000
 * were written; here the last 131,072.
 */
const ringSize = 128 * 1024;

/** One who watches a console (an attached interactive console): what it sends out, and the guest's stop. */
export interface ConsoleWatcher {
  output(bytes: Buffer): void;
  stopped(): void;
}

/**
 * The console of one instance's guest, as liblxc keeps it for the daemon's console log (recorded on
 * LXD 5.0.2 and Incus 6.0.4): what is written to it passes the pty's output processing (ONLCR: a
 * newline goes out as `\r\n`) into a ring buffer, which a read of the log takes and empties while
 * the instance runs; when the guest stops, what is left unread becomes the log file, read as it is
 * until the next stop. What goes out also goes to whoever {@link watch}es it, as liblxc hands it to
 * an attached console as well as to the ring.
 */
export class GuestConsole {
  private ring: Buffer = Buffer.alloc(0);
  /** The log file of the last run, written when it stopped. */
  private file: Buffer = Buffer.alloc(0);
  private readonly watchers = new Set<ConsoleWatcher>();

  /** A write to the console, through the pty's ONLCR. */
  write(bytes: Uint8Array): void {
    this.sendOut(Buffer.from(Buffer.from(bytes).toString('latin1').replace(/\n/g, '\r\n'), 'latin1'));
  }

  /** Bytes the console's pty sends out as they are: its line discipline's echoes of what is typed, already processed. */
  echo(bytes: Buffer): void {
    this.sendOut(bytes);
  }

  /** `watcher` gets what the console sends out from now on (not what the ring holds already) and its guest's stop; the function returned ends that. */
  watch(watcher: ConsoleWatcher): () => void {
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  private sendOut(out: Buffer): void {
    const all = Buffer.concat([this.ring, out]);
    this.ring = all.length > ringSize ? all.subarray(all.length - ringSize) : all;
    for (const watcher of this.watchers) watcher.output(out);
  }

  /** A read of the running guest's log: what the ring holds, which the read empties. */
  take(): Buffer {
    const ring = this.ring;
    this.ring = Buffer.alloc(0);
    return ring;
  }

  /** The stopped guest's log file: the ring left unread when it stopped. */
  get log(): Buffer {
    return this.file;
  }

  /** The guest stopped: liblxc writes the ring into the log file, and the next run starts with an empty ring. */
  stopped(): void {
    this.file = this.take();
    for (const watcher of [...this.watchers]) watcher.stopped();
  }

  /** `DELETE …/console`: the log is emptied. */
  clear(): void {
    this.ring = Buffer.alloc(0);
    this.file = Buffer.alloc(0);
  }
}
