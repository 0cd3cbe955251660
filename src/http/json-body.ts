import type { Context } from 'hono';
import { parseBoundedJson } from '../input/json-bounds.js';

/** Largest JSON body the dashboard and the console take: 64 KiB (their requests are a few hundred bytes). */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

/**
 * The JSON body of a dashboard or console request, bounded before it is parsed (64 KiB, 64 levels
 * deep: json-bounds.ts); undefined when there is none, it is not JSON or it is out of bounds, which
 * the route's schema then refuses with a 400. A body announced larger is not read at all.
 */
export async function jsonBody(c: Context): Promise<unknown> {
  if (Number(c.req.header('content-length') ?? 0) > MAX_JSON_BODY_BYTES) return undefined;
  const text = await c.req.text().catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseBoundedJson(text, { maxBytes: MAX_JSON_BODY_BYTES });
  return parsed.ok ? parsed.value : undefined;
}
