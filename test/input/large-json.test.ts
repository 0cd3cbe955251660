import { describe, expect, it } from 'vitest';
import { LARGE_JSON_CHARS, parseLargeJson } from '../../src/input/large-json.js';

/** An envelope like the daemon's listing: `count` instances of about 1 KB each in `metadata`. */
function listing(count: number): string {
  const instances = Array.from({ length: count }, (_, i) => ({
    name: `inst-${i}`,
    status: 'Running',
    status_code: 103,
    config: { 'volatile.uuid': `uuid-${i}`, 'user.note': `a "quoted" \\ note with [brackets] and {braces}, ${'x'.repeat(700)}` },
    devices: { root: { path: '/', pool: 'default', type: 'disk' } },
    profiles: ['default'],
    snapshots: null,
    nested: [[1, 2], { a: [] }],
  }));
  return JSON.stringify({ type: 'sync', status: 'Success', status_code: 200, operation: '', error_code: 0, error: '', metadata: instances });
}

/** What parseLargeJson answers, or the message it throws. */
async function outcome(text: string): Promise<unknown> {
  try {
    return await parseLargeJson(text);
  } catch (err) {
    return { threw: (err as Error).name };
  }
}
function expected(text: string): unknown {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { threw: (err as Error).name };
  }
}

describe('a large JSON body from the daemon is parsed in steps', () => {
  it('gives the value JSON.parse gives, for a listing of thousands of instances, and lets the event loop turn meanwhile', async () => {
    const text = listing(3_000);
    expect(text.length).toBeGreaterThan(2 * LARGE_JSON_CHARS);
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const parsed = await parseLargeJson(text);
    counting = false;
    expect(parsed).toEqual({ ok: true, value: JSON.parse(text) });
    // One JSON.parse of the whole text would have let no other callback run before it ended.
    expect(turns, 'turns of the loop while parsing').toBeGreaterThan(4);
  });

  it('answers exactly as JSON.parse does for texts around the split array, valid or not', async () => {
    const big = listing(1_500);
    const body = big.slice(0, -1);
    const at = big.indexOf('"metadata":[') + '"metadata":['.length;
    const cases = [
      big,
      // the array elsewhere, other members after it, a second (smaller) array
      `${body},"after":[1,2,3],"n":null}`,
      // a missing comma, a doubled comma, a trailing comma, a leading comma between the elements
      big.replace('},{"name":"inst-7"', '}{"name":"inst-7"'),
      big.replace('},{"name":"inst-7"', '},,{"name":"inst-7"'),
      big.replace(/\}\]\}$/, '},]}'),
      `${big.slice(0, at)},${big.slice(at)}`,
      // a scalar element among the objects, garbage between elements, a colon
      big.replace('},{"name":"inst-9"', '},42,{"name":"inst-9"'),
      big.replace('},{"name":"inst-9"', '} x ,{"name":"inst-9"'),
      big.replace('},{"name":"inst-9"', '}:{"name":"inst-9"'),
      // a duplicate key: the later value wins
      `${body},"metadata":[{"last":true}]}`,
      `{"metadata":[{"first":true}],${big.slice(1)}`,
      // a __proto__ member holding the array
      big.replace('"metadata":[', '"__proto__":['),
      // not an object at the top, text after the value, unterminated
      `[${big}]`,
      `${big} {}`,
      big.slice(0, -3),
    ];
    for (const text of cases) expect(await outcome(text), text.slice(0, 60)).toEqual(expected(text));
    const proto = (await parseLargeJson(cases[11]!)) as { ok: true; value: object };
    expect(Object.getPrototypeOf(proto.value)).toBe(Object.prototype);
  });

  it('refuses a large body nested too deep, before it is built', async () => {
    const deep = `${listing(1_200).slice(0, -2)},${'['.repeat(200)}${']'.repeat(200)}]}`;
    expect(deep.length).toBeGreaterThan(LARGE_JSON_CHARS);
    expect(await parseLargeJson(deep, { maxDepth: 128 })).toEqual({ ok: false, problem: 'nested deeper than 128 levels' });
  });
});
