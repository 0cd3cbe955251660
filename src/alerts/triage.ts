import { z } from 'zod';

/**
 * Triage of an incident by the people on call: acknowledged (someone is on it), assigned to a
 * user, annotated with notes. It lives in the incident's audit trail (records of type `triage`)
 * and on the incident's firing alerts, so receivers get it as an update of the alert they hold.
 */
export const triageSchema = z.object({
  /** The first acknowledgement: who and when (ISO). A later one changes nothing. */
  acknowledged: z.object({ by: z.string(), at: z.string() }).optional(),
  /** Who the incident is assigned to, by whom and when; the last assignment wins. */
  assignee: z.object({ name: z.string(), by: z.string(), at: z.string() }).optional(),
  /** The notes, oldest first (an alert carries the newest {@link alertNotesKept}). */
  notes: z.array(z.object({ by: z.string(), at: z.string(), text: z.string() })).default([]),
  /** Counts the changes: a receiver's last message showed the alert at one revision. */
  revision: z.number().int().nonnegative().default(0),
});
export type Triage = z.infer<typeof triageSchema>;

/** One triage step. */
export type TriageChange = { ack: true } | { assign: string } | { note: string };

/** The notes an alert carries (its message stays short); the audit trail keeps them all. */
export const alertNotesKept = 5;
/** The longest note, in characters. */
export const maxNoteLength = 2_000;
/** A user name as the users file spells one (and an identity provider's, within the same characters). */
export const assigneePattern = /^[A-Za-z0-9._@-]{1,100}$/;

/** `triage` with `change` made by `by` at `at`, or undefined when it changes nothing (a second acknowledgement, the same assignee). */
export function applyTriage(triage: Triage | undefined, change: TriageChange, by: string, at: string): Triage | undefined {
  const t: Triage = triage ?? { notes: [], revision: 0 };
  if ('ack' in change) return t.acknowledged ? undefined : { ...t, acknowledged: { by, at }, revision: t.revision + 1 };
  if ('assign' in change)
    return t.assignee?.name === change.assign ? undefined : { ...t, assignee: { name: change.assign, by, at }, revision: t.revision + 1 };
  return { ...t, notes: [...t.notes, { by, at, text: change.note }], revision: t.revision + 1 };
}

/** The step in words, as its audit record and the answer say it: `acknowledged`, `assigned it to bob`, `added a note: …`. */
export function triageWords(change: TriageChange): string {
  if ('ack' in change) return 'acknowledged';
  if ('assign' in change) return `assigned it to ${change.assign}`;
  return `added a note: ${change.note}`;
}

/** The triage as lines of a message: `Acknowledged by alice at …`, `Assigned to bob (by alice)`, `Note by alice: …`. */
export function triageLines(t: Triage | undefined): string[] {
  if (!t) return [];
  const lines: string[] = [];
  if (t.acknowledged) lines.push(`Acknowledged by ${t.acknowledged.by} at ${t.acknowledged.at}`);
  if (t.assignee) lines.push(`Assigned to ${t.assignee.name} (by ${t.assignee.by} at ${t.assignee.at})`);
  for (const n of t.notes) lines.push(`Note by ${n.by} at ${n.at}: ${n.text}`);
  return lines;
}
