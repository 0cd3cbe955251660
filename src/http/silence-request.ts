import { z } from 'zod';
import { readDuration } from '../config/duration.js';
import { silenceMutes, type Silence, type Silences } from '../silences/silences.js';

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

/**
 * Adds the silence a request body asks for, recorded (and audited) with `origin`: answers the
 * silence, or what is wrong with the request.
 */
export async function addSilenceFromRequest(silences: Silences, body: unknown, origin: string): Promise<{ silence: Silence } | { error: string }> {
  const parsed = silenceRequestSchema.safeParse(body);
  if (!parsed.success) return { error: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') };
  const { scope, duration, reason, mutes, createdBy } = parsed.data;
  // A bare number would be milliseconds: on a form more likely a slip, as on the command line.
  const durationMs = /^\s*\d+(\.\d+)?\s*$/.test(duration) ? undefined : readDuration(duration);
  if (!durationMs) return { error: 'duration: expected a duration such as 30m, 2h, 1h30m, 1w' };
  const clean = Object.fromEntries(Object.entries(scope).filter(([, v]) => v)) as typeof scope;
  if (!Object.keys(clean).length && !parsed.data.all) return { error: 'scope: give an instance, project, member (location) or target, or all: true' };
  try {
    return { silence: await silences.add({ scope: clean, durationMs, reason, mutes, createdBy: createdBy || origin, origin }) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
