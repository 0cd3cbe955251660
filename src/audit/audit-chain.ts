import { createHash } from 'node:crypto';
import type { RedisConnection } from '../redis/connect.js';
import { groupCommitFor, GroupCommit } from '../redis/group-commit.js';
import { LuaScript } from '../redis/script.js';

/** The `prev` of the very first record of a log that was never trimmed. */
export const GENESIS = '0'.repeat(40);

/**
 * The hash that chains a record: SHA-1 over `prev`, the stream id and the record's canonical JSON,
 * separated by newlines. The append script computes the same with `redis.sha1hex`.
 *
 * Why SHA-1: Redis Lua offers only `redis.sha1hex`, and computing the hash inside the script is
 * what makes an append one atomic round trip while several replicas append at once (SHA-256 in
 * Node would need WATCH/MULTI and retries on every contended append). The chain is meant to expose
 * edits, deletions and insertions; forging one needs a SHA-1 second preimage, which is not known to
 * be feasible (the known SHA-1 attacks are collisions, where the attacker writes both records).
 * Someone with write access to Redis can still rebuild the whole chain after an edit, as with any
 * unkeyed chain: keep the head hash that `reflex audit verify` prints somewhere else to catch that.
 */
export function chainHash(prev: string, id: string, json: string): string {
  return createHash('sha1').update(`${prev}\n${id}\n${json}`, 'utf8').digest('hex');
}

/**
 * The hash key beside the stream holding `head-id`, `head-hash`, `anchor-id` (oldest record kept by
 * the last trim) and, while a history store takes the records, `shipped-id`: the newest record the
 * store holds, past which no trim goes (`0-0`: none yet).
 */
export function chainKey(streamKey: string): string {
  return `${streamKey}:chain`;
}

// KEYS[1] stream, KEYS[2] chain hash, KEYS[3..] once-keys; ARGV[1] max records (0: none), ARGV[2]
// max age in ms (0: none), then per record: its JSON, the index in KEYS of its once-key (0: none)
// and that key's TTL in ms. Appends the records in order, each chained to the one before; a record
// whose once-key was already set is skipped (false in the answer). Answers the stream ids.
// The ids are chosen here rather than with XADD '*' because a record's own hash covers its id.
const appendLua = `
local stream, chain = KEYS[1], KEYS[2]
local maxRecords, maxAgeMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lastMs, lastSeq = -1, 0
if redis.call('EXISTS', stream) == 1 then
  local info = redis.call('XINFO', 'STREAM', stream)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local ms, seq = string.match(info[i + 1], '^(%d+)-(%d+)$')
      lastMs, lastSeq = tonumber(ms), tonumber(seq)
    end
  end
end
local prev = redis.call('HGET', chain, 'head-hash') or '${GENESIS}'
local ids, appended, headId = {}, 0, nil
for r = 3, #ARGV, 3 do
  local json, onceIndex = ARGV[r], tonumber(ARGV[r + 1])
  if onceIndex > 0 and not redis.call('SET', KEYS[onceIndex], '1', 'NX', 'PX', ARGV[r + 2]) then
    ids[#ids + 1] = false
  else
    if now > lastMs then lastMs, lastSeq = now, 0 else lastSeq = lastSeq + 1 end
    local id = string.format('%.0f-%.0f', lastMs, lastSeq)
    local hash = redis.sha1hex(prev .. '\\n' .. id .. '\\n' .. json)
    redis.call('XADD', stream, id, 'json', json, 'prev', prev, 'hash', hash)
    prev, headId, appended = hash, id, appended + 1
    ids[#ids + 1] = id
  end
end
if appended == 0 then return ids end
redis.call('HSET', chain, 'head-id', headId, 'head-hash', prev)
local trimmed = 0
local shipped = redis.call('HGET', chain, 'shipped-id')
if not shipped then
  if maxRecords > 0 then trimmed = trimmed + redis.call('XTRIM', stream, 'MAXLEN', '~', maxRecords) end
  if maxAgeMs > 0 then trimmed = trimmed + redis.call('XTRIM', stream, 'MINID', string.format('%.0f', now - maxAgeMs)) end
else
  -- A history store takes the records: none is dropped before it holds it. MAXLEN cannot be
  -- capped by an id, so the count limit becomes an id too: the successor of the last record past
  -- the limit (at most 1000 a call, so an append never walks a long backlog), and the trim is one
  -- MINID at the lower of that, the age cut and the successor of the shipped watermark.
  local sms, sseq = string.match(shipped, '^(%d+)-(%d+)$')
  local capMs, capSeq = tonumber(sms), tonumber(sseq) + 1
  local cutMs, cutSeq = 0, 0
  if maxRecords > 0 then
    local excess = redis.call('XLEN', stream) - maxRecords
    if excess > 0 then
      local rows = redis.call('XRANGE', stream, '-', '+', 'COUNT', math.min(excess, 1000))
      local ms, seq = string.match(rows[#rows][1], '^(%d+)-(%d+)$')
      cutMs, cutSeq = tonumber(ms), tonumber(seq) + 1
    end
  end
  if maxAgeMs > 0 and now - maxAgeMs > cutMs then cutMs, cutSeq = now - maxAgeMs, 0 end
  if cutMs > capMs or (cutMs == capMs and cutSeq > capSeq) then cutMs, cutSeq = capMs, capSeq end
  if cutMs > 0 or cutSeq > 0 then trimmed = redis.call('XTRIM', stream, 'MINID', string.format('%.0f-%.0f', cutMs, cutSeq)) end
end
if trimmed > 0 then
  local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
  redis.call('HSET', chain, 'anchor-id', first[1])
end
return ids
`;
const appendScript = new LuaScript(appendLua);

/** One record for {@link appendChained}. */
interface PendingRecord {
  json: string;
  once?: { key: string; ttlMs: number };
}

type Retention = { maxRecords: number; maxAgeMs: number };

const groups = new WeakMap<object, Map<string, GroupCommit<PendingRecord, string | undefined>>>();

/**
 * Appends one record JSON to the chain, trimming by count (approximate, whole stream nodes) and by
 * age (exact), never past `shipped-id` while a history store takes the records. Returns the new
 * stream id, or undefined when `once` was already set. Records
 * appended at the same moment by this process share one script call (a group commit, in call
 * order); each call is one atomic round trip (EVALSHA, falling back to EVAL once per server that
 * has not seen the script), so appends from several replicas interleave without breaking the chain.
 */
export function appendChained(
  redis: RedisConnection,
  streamKey: string,
  json: string,
  retention: Retention,
  once?: { key: string; ttlMs: number },
): Promise<string | undefined> {
  const name = `${streamKey}\u0000${retention.maxRecords}\u0000${retention.maxAgeMs}`;
  const group = groupCommitFor(groups, redis, name, () => new GroupCommit((records) => appendRecords(redis, streamKey, records, retention)));
  return group.submit(once ? { json, once } : { json });
}

async function appendRecords(
  redis: RedisConnection,
  streamKey: string,
  records: PendingRecord[],
  retention: Retention,
): Promise<(string | undefined)[]> {
  const keys = [streamKey, chainKey(streamKey)];
  const args: (string | number)[] = [retention.maxRecords, retention.maxAgeMs];
  for (const r of records) {
    if (r.once) keys.push(r.once.key);
    args.push(r.json, r.once ? keys.length : 0, r.once?.ttlMs ?? 0);
  }
  const ids = (await appendScript.run(redis, keys, args)) as (string | null)[];
  return ids.map((id) => id ?? undefined);
}
