import { matchingSilence, type Silence, type SilenceMute } from '../../silences/silences.js';
import type { FleetRow } from './fleet-view.js';

/** A silence longer than this needs a reason in words (a broad one does too). */
export const longSilenceMs = 24 * 3_600_000;
/** What "a reason in words" means: at least this many words… */
export const reasonMinWords = 3;
/** …and this many characters. */
export const reasonMinChars = 15;

/** What a silence would cover now: how many instances of the fleet, and the first few names. */
export interface SilencePreview {
  matches: number;
  /** Up to 10 `project/name`, in the fleet's order. */
  names: string[];
  /** Whether a reason of {@link reasonMinWords} words is needed (long or broad). */
  reasonNeeded: boolean;
}

/** The instances of `rows` a silence of `scope` (muting `mutes`) would match now, as an operator previews it before adding. */
export function previewSilence(rows: FleetRow[], scope: Silence['scope'], mutes: readonly SilenceMute[], durationMs?: number): SilencePreview {
  const probe: Silence = {
    id: 'preview',
    scope,
    mutes: mutes.length ? [...mutes] : ['actions'],
    reason: '',
    createdBy: '',
    createdAt: '',
    until: '',
  };
  const what = probe.mutes[0]!;
  const matched = rows.filter((r) =>
    matchingSilence([probe], { target: r.target, project: r.project, location: r.location ?? 'none', instance: r.name }, what),
  );
  return {
    matches: matched.length,
    names: matched.slice(0, 10).map((r) => `${r.project}/${r.name}`),
    reasonNeeded: matched.length > 1 || (durationMs ?? 0) > longSilenceMs,
  };
}

/**
 * Why `reason` is not enough for a silence that covers `matches` instances for `durationMs`, or
 * undefined: a silence longer than a day or of more than one instance turns automation off for
 * more than a moment, so the next operator must be able to read why ("x" does not say).
 */
export function reasonProblem(reason: string, durationMs: number, matches: number): string | undefined {
  if (matches <= 1 && durationMs <= longSilenceMs) return undefined;
  const words = reason
    .trim()
    .split(/\s+/)
    .filter((w) => /\w/.test(w)).length;
  if (words >= reasonMinWords && reason.trim().length >= reasonMinChars) return undefined;
  const why = matches > 1 ? `it matches ${matches} instances now` : 'it lasts more than a day';
  return `reason: ${why}, so say why in at least ${reasonMinWords} words (${reasonMinChars} characters), e.g. "kernel upgrade on the db hosts, ticket OPS-123"`;
}
