/** An inode's three times as stat(2) gives them, in nanoseconds since the epoch. */
export interface InodeTimes {
  atime: bigint;
  mtime: bigint;
  ctime: bigint;
}

const nsPerMs = 1_000_000n;

/** A time in nanoseconds as a Date (which keeps milliseconds). */
export const dateOf = (ns: bigint): Date => new Date(Number(ns / nsPerMs));

/** A Date in nanoseconds. */
export const nsOf = (date: Date): bigint => BigInt(date.getTime()) * nsPerMs;

let lastNs = 0n;

/**
 * The wall clock with nine digits after the second, as the kernel stamps an inode (a Date alone
 * would print `.865000000`): the milliseconds are the wall clock's, the rest the monotonic clock's.
 * The two are not in step, so each reading is kept after the last: a later change is never older.
 */
export function clockNs(): bigint {
  const now = BigInt(Date.now()) * nsPerMs + (process.hrtime.bigint() % nsPerMs);
  lastNs = now > lastNs ? now : lastNs + 1n;
  return lastNs;
}

/** relatime also moves an atime older than this, however it compares with the other two. */
const relatimeWindow = 24n * 3600n * 1_000_000_000n;

interface Kept extends InodeTimes {
  /** The in-memory filesystem's mtime (ms) when these were kept: another value means it was written behind the table's back. */
  seen: number;
}

/**
 * The access and change times the in-memory filesystem does not keep (it keeps one mtime, in
 * milliseconds), per inode (the filesystem's entry identity, shared by a file's hard links), with
 * the nanoseconds of all three. An inode the table never saw was unpacked with the filesystem: its
 * mtime is the image's, its atime and ctime when the filesystem was made (as on the beds, where an
 * image's files change and are read when the container is made), or its mtime if that is later.
 * One whose mtime moved without the table (a program writing the in-memory filesystem directly,
 * `tar -o` setting it) takes that mtime, and a ctime no older.
 */
export class TimeTable {
  private readonly kept = new Map<string, Kept>();

  /** @param made When the filesystem was made (unpacked). */
  constructor(private readonly made: bigint = clockNs()) {}

  /** The times of `inode` (none for a symlink: it has its mtime and when it was unpacked), whose mtime the in-memory filesystem holds as `mtime`. */
  of(inode: string | undefined, mtime: Date): InodeTimes {
    const kept = inode === undefined ? undefined : this.kept.get(inode);
    if (!kept) {
      const ns = nsOf(mtime);
      const made = ns > this.made ? ns : this.made;
      return { atime: made, mtime: ns, ctime: made };
    }
    if (kept.seen === mtime.getTime()) return { atime: kept.atime, mtime: kept.mtime, ctime: kept.ctime };
    const ns = nsOf(mtime);
    return { atime: kept.atime, mtime: ns, ctime: kept.ctime > ns ? kept.ctime : ns };
  }

  /** Keeps `times` for `inode`; returns the Date the in-memory filesystem must hold as its mtime. */
  set(inode: string, times: InodeTimes): Date {
    const mtime = dateOf(times.mtime);
    this.kept.set(inode, { ...times, seen: mtime.getTime() });
    return mtime;
  }

  /**
   * Whether a read at `now` moves the atime, under the beds' `relatime` mount option: when the
   * atime is not after the mtime or the ctime, or is a day old.
   */
  static readMoves(times: InodeTimes, now: bigint): boolean {
    return times.atime <= times.mtime || times.atime <= times.ctime || now - times.atime >= relatimeWindow;
  }
}
