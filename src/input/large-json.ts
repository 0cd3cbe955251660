import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  DEFAULT_MAX_JSON_DEPTH,
  isSpace,
  jsonShape,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  stringEnd,
  type JsonLimits,
} from './json-bounds.js';

/**
 * Parsing a large JSON body without stalling the event loop.
 *
 * The daemon's listing of 10 000 instances is a 27 MB envelope; one `JSON.parse` of it takes
 * 120–350 ms and its validation as much again, during which nothing else in the process runs: no
 * event is taken, no lock or lease renewed, no console page served. The envelope's bulk is the
 * elements of one array (`metadata`), each a small object: the scan below finds them, the
 * envelope around them is parsed alone, and the elements are parsed in slices with a turn of the
 * event loop between slices. Each step is short; the value is the same as `JSON.parse` gives.
 */

/** Below this many characters a text is parsed at once (a listing of ~300 instances). */
export const LARGE_JSON_CHARS = 1 << 20;

/** Characters scanned, or elements parsed, between two turns of the event loop. */
const SCAN_SLICE_CHARS = 1 << 20;
const PARSE_SLICE_CHARS = 1 << 19;

const COMMA = 0x2c;

/** Where the elements of the largest array directly in the top-level object are, when each is an object or array. */
interface Split {
  /** Offsets of the array's `[` and `]`. */
  open: number;
  close: number;
  /** [start, end) of each element. */
  elements: [number, number][];
}

/**
 * Parses `text` as `JSON.parse` would, in steps of bounded length: a text below
 * {@link LARGE_JSON_CHARS}, or one without a large array of objects in its top-level object, is
 * parsed at once (after its bounds are checked, as {@link jsonShape} does). Throws what
 * `JSON.parse` throws for a text that is not JSON; answers `{ ok: false }` for one out of bounds.
 */
export async function parseLargeJson(text: string, limits: JsonLimits = {}): Promise<{ ok: true; value: unknown } | { ok: false; problem: string }> {
  if (text.length < LARGE_JSON_CHARS || limits.maxBytes !== undefined) {
    const shape = jsonShape(text, limits);
    return shape.ok ? { ok: true, value: JSON.parse(text) as unknown } : shape;
  }
  const scanned = await scan(text, limits.maxDepth ?? DEFAULT_MAX_JSON_DEPTH);
  if (!scanned.ok) return scanned;
  const split = scanned.split;
  if (!split) return { ok: true, value: JSON.parse(text) as unknown };

  // The envelope with the array as a marker string, then the marker's member filled element by element.
  const marker = `\u0000reflex-elements-${split.open}`;
  const outer = JSON.parse(`${text.slice(0, split.open)}${JSON.stringify(marker)}${text.slice(split.close + 1)}`) as Record<string, unknown>;
  const member = Object.keys(outer).find((k) => outer[k] === marker);
  if (member === undefined || member === '__proto__') return { ok: true, value: JSON.parse(text) as unknown }; // not where the scan said: parse it whole
  const items: unknown[] = [];
  let since = 0;
  for (const [start, end] of split.elements) {
    items.push(JSON.parse(text.slice(start, end)));
    since += end - start;
    if (since >= PARSE_SLICE_CHARS) {
      since = 0;
      await yieldToLoop();
    }
  }
  outer[member] = items;
  return { ok: true, value: outer };
}

/**
 * One pass over the text, in slices with a turn of the event loop between them: the nesting depth
 * (refused past `maxDepth`, as {@link jsonShape} does) and the elements of the largest array that
 * is a member of the top-level object, when every element of it is an object or an array and the
 * elements are separated by single commas. Anything else between them (a scalar element, a
 * missing or doubled comma) leaves that array whole: `JSON.parse` of the whole text then gives the
 * value or the error, as it would have anyway.
 */
async function scan(text: string, maxDepth: number): Promise<{ ok: true; split?: Split } | { ok: false; problem: string }> {
  let depth = 0;
  // The array being collected (a member of the top-level object); whether it cannot be split; whether a comma is due before the next element.
  let current: Split | undefined;
  let scalar = false;
  let commaDue = false;
  let best: Split | undefined;
  let topLevelIsObject = false;
  let elementStart = -1;
  let nextYield = SCAN_SLICE_CHARS;
  for (let i = 0; i < text.length; i++) {
    if (i >= nextYield) {
      nextYield = i + SCAN_SLICE_CHARS;
      await yieldToLoop();
    }
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      if (current && depth === 2) scalar = true; // a string element
      i = stringEnd(text, i);
      if (i < 0) return { ok: true }; // unterminated: JSON.parse says so
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 0) topLevelIsObject = c === OPEN_OBJECT;
      else if (depth === 1 && c === OPEN_ARRAY && topLevelIsObject) {
        current = { open: i, close: -1, elements: [] };
        scalar = false;
        commaDue = false;
      } else if (depth === 2 && current) {
        if (commaDue) scalar = true;
        elementStart = i;
      }
      if (++depth > maxDepth) return { ok: false, problem: `nested deeper than ${maxDepth} levels` };
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
      if (depth === 2 && current && elementStart >= 0) {
        current.elements.push([elementStart, i + 1]);
        elementStart = -1;
        commaDue = true;
      } else if (depth === 1 && current) {
        if (current.elements.length > 0 && !commaDue) scalar = true; // a trailing comma
        current.close = i;
        if (!scalar && (!best || current.elements.length > best.elements.length)) best = current;
        current = undefined;
      }
      continue;
    }
    if (!current || depth !== 2 || isSpace(c)) continue;
    if (c === COMMA && commaDue) commaDue = false;
    else scalar = true; // a number, true, false or null element, or a stray comma or colon
  }
  return { ok: true, split: best && best.elements.length > 1 ? best : undefined };
}
