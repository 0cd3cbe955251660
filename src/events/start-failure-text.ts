import type { StartFailure } from './canonical-event.js';

/**
 * One line for a failed start, as the audit and the alert say it: the daemon's error and the
 * daemon client's hint to its log (`lxc` prints the same hint after a failed `lxc launch`; the
 * operation's `err` does not carry it). Incus is recognised by its daemon's name in the error.
 */
export function describeStartFailure(ref: { project: string; instance: string }, failure: StartFailure): string {
  const cli = /\bincusd?\b|\/incus\//.test(failure.err) ? 'incus' : 'lxc';
  const project = ref.project !== 'default' ? ` --project ${ref.project}` : '';
  const err = failure.err.trim() || 'no error given';
  return `${ref.instance} failed to start and never ran: ${err}. Try \`${cli} info --show-log ${ref.instance}${project}\` for more info`;
}
