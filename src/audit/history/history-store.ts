import type { VerifyResult } from '../audit-verifier.js';

/**
 * One audit record as the chain holds it: its stream id, the canonical JSON that was hashed, and
 * its chain fields. A store keeps these exactly, so a record verifies the same in Redis and in it.
 */
export interface HistoryEntry {
  id: string;
  json: string;
  prev: string;
  hash: string;
}

/** The newest record a store holds: the shipped watermark. */
export interface HistoryHead {
  id: string;
  hash: string;
}

/** Bounds of a read, both inclusive, as stream ids; `-` and `+` are open. */
export interface HistoryRange {
  start: string;
  end: string;
}

/**
 * Durable storage for audit records that leave Redis: an append-only copy of the chain's oldest
 * part. The newest record it holds is the shipped watermark, authoritative (the shipper mirrors it
 * in Redis), so a batch written and a watermark moved are one step for the store.
 */
export interface HistoryStore {
  /** `files` or `postgres`, for logs and `reflex audit verify`. */
  readonly kind: string;
  /** Creates or migrates what the store needs; safe to call on every start. */
  open(): Promise<void>;
  /** The newest record held, or undefined when the store is empty. */
  head(): Promise<HistoryHead | undefined>;
  /**
   * Appends records, oldest first, after the head: the first one's `prev` must be the head's hash
   * (any `prev` when the store is empty). Durable when it resolves; nothing of a batch that throws
   * is kept.
   */
  append(entries: readonly HistoryEntry[]): Promise<void>;
  /** Records within the range, oldest first. */
  entries(range: HistoryRange): AsyncIterable<HistoryEntry>;
  /** Checks every record's hash and link, and the store's own checkpoints; `headId`/`headHash` are the newest record's. */
  verify(): Promise<VerifyResult>;
  close(): Promise<void>;
}
