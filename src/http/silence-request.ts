import { z } from 'zod';
import { readDuration } from '../config/duration.js';
import { silenceMutes, type Silence, type SilenceMute, type Silences } from '../silences/silences.js';

/** The body of a silence added from the dashboard or the console (POST, JSON, write token). */
export const silenceRequestSchema = z.strictObject({
  scope: z
    .strictObject({
      instance: z.string().max(200).optional(),
      project: z.string().max(200).optional(),
      location: z.string().max(200).optional(),
      target: z.string().max(500).optional(),
    })
    .default({}),
  /** Everything (a global maintenance window), instead of a scope. */
  all: z.boolean().optional(),
  duration: z.string().min(1).max(40),
  reason: z.string().min(1).max(500),
  mutes: z.array(z.enum(silenceMutes)).min(1).optional(),
  /** Who, as the operator typed it. Default: the origin's name. */
  createdBy: z.string().max(100).optional(),
});

/** Words a silence of everything needs in its reason. */
const everythingReasonWords = 3;
const everythingReasonOk = (reason: string) =>
  reason.trim().length >= 15 &&
  reason
    .trim()
    .split(/\s+/)
    .filter((w) => /\w/.test(w)).length >= everythingReasonWords;

/** A silence request, checked: what it asks for, ready for `Silences.add`. */
export interface SilenceRequest {
  scope: Silence['scope'];
  durationMs: number;
  reason: string;
  mutes?: SilenceMute[];
  createdBy?: string;
}

/** Reads a silence request body: what it asks for, or what is wrong with it. */
export function readSilenceRequest(body: unknown): SilenceRequest | { error: string } {
  const parsed = silenceRequestSchema.safeParse(body);
  if (!parsed.success) return { error: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') };
  const { scope, duration, reason, mutes, createdBy } = parsed.data;
  // A bare number would be milliseconds: on a form more likely a slip, as on the command line.
  const durationMs = /^\s*\d+(\.\d+)?\s*$/.test(duration) ? undefined : readDuration(duration);
  if (!durationMs) return { error: 'duration: expected a duration such as 30m, 2h, 1h30m, 1w' };
  const clean = Object.fromEntries(Object.entries(scope).filter(([, v]) => v)) as typeof scope;
  if (!Object.keys(clean).length && !parsed.data.all) return { error: 'scope: give an instance, project, member (location) or target, or all: true' };
  // Everything muted is automation off for the whole fleet: the next operator must read why.
  if (!Object.keys(clean).length && !everythingReasonOk(reason))
    return { error: `reason: a silence of everything needs a reason of at least ${everythingReasonWords} words (what, why, a ticket)` };
  return { scope: clean, durationMs, reason, mutes, createdBy };
}

/**
 * Adds the silence a request body asks for, recorded (and audited) with `origin`: answers the
 * silence, or what is wrong with the request. `check` may refuse a well-formed request (the
 * console's rule on long and broad silences); `createdBy` overrides the body's (an authenticated user).
 */
export async function addSilenceFromRequest(
  silences: Silences,
  body: unknown,
  origin: string,
  opts: { check?: (r: SilenceRequest) => Promise<string | undefined>; createdBy?: string } = {},
): Promise<{ silence: Silence } | { error: string }> {
  const r = readSilenceRequest(body);
  if ('error' in r) return r;
  const refused = await opts.check?.(r);
  if (refused) return { error: refused };
  try {
    return {
      silence: await silences.add({
        scope: r.scope,
        durationMs: r.durationMs,
        reason: r.reason,
        mutes: r.mutes,
        createdBy: opts.createdBy || r.createdBy || origin,
        origin,
      }),
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
