import type { Command } from 'just-bash';
import { bcCommand } from './busybox-bc.js';
import { dcCommand } from './busybox-dc.js';
import type { ProgramHost } from './program-host.js';

/** busybox's calculators: `bc` (busybox-bc.ts) and `dc` (busybox-dc.ts), over busybox-calc-num.ts. */
export function busyboxCalc(host: ProgramHost): Command[] {
  return [bcCommand(host), dcCommand(host)];
}
