import { createHash } from 'node:crypto';
import type { RedisConnection } from '../redis/connect.js';
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

/** The hash key beside the stream holding `head-id`, `head-hash` and `anchor-id` (oldest record kept by the last trim). */
export function chainKey(streamKey: string): string {
  return `${streamKey}:chain`;
}

// KEYS[1] stream, KEYS[2] chain hash; ARGV[1] record JSON, ARGV[2] max records (0: none), ARGV[3] max age in ms (0: none).
// The id is chosen here rather than with XADD '*' because the record's own hash covers its id.
const appendLua = `
local stream, chain = KEYS[1], KEYS[2]
local json, maxRecords, maxAgeMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
-- KEYS[3] (optional): a once-key; the record is appended only if that key was not set yet (ARGV[4] its TTL).
if KEYS[3] and not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[4]) then return false end
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
local id
if now > lastMs then id = string.format('%.0f-0', now) else id = string.format('%.0f-%.0f', lastMs, lastSeq + 1) end
local prev = redis.call('HGET', chain, 'head-hash') or '${GENESIS}'
local hash = redis.sha1hex(prev .. '\\n' .. id .. '\\n' .. json)
redis.call('XADD', stream, id, 'json', json, 'prev', prev, 'hash', hash)
redis.call('HSET', chain, 'head-id', id, 'head-hash', hash)
local trimmed = 0
if maxRecords > 0 then trimmed = trimmed + redis.call('XTRIM', stream, 'MAXLEN', '~', maxRecords) end
if maxAgeMs > 0 then trimmed = trimmed + redis.call('XTRIM', stream, 'MINID', string.format('%.0f', now - maxAgeMs)) end
if trimmed > 0 then
  local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
  redis.call('HSET', chain, 'anchor-id', first[1])
end
return id
`;
const appendScript = new LuaScript(appendLua);

/**
 * Appends one record JSON to the chain in one round trip (EVALSHA, falling back to EVAL once per
 * server that has not seen the script), trimming by count (approximate, whole stream nodes) and by
 * age (exact). Returns the new stream id.
 */
export async function appendChained(redis: RedisConnection, streamKey: string, json: string, retention: { maxRecords: number; maxAgeMs: number }, once?: { key: string; ttlMs: number }): Promise<string | undefined> {
  const keys = once ? [streamKey, chainKey(streamKey), once.key] : [streamKey, chainKey(streamKey)];
  const args = once ? [json, retention.maxRecords, retention.maxAgeMs, once.ttlMs] : [json, retention.maxRecords, retention.maxAgeMs];
  return ((await appendScript.run(redis, keys, args)) as string | null) ?? undefined;
}
