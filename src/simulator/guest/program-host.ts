import type { GuestFs } from './guest-fs.js';

/**
 * What the busybox programs on files, archives and text need to know about the command running
 * them (the same as busybox-files.ts's `FilesHost`, which registers them).
 */
export interface ProgramHost {
  fs: GuestFs;
  uid: number;
  gid: number;
  /** Says that a program wrote raw bytes (not text) to the command's output. */
  rawOutput: () => void;
}
