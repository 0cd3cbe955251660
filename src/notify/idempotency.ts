/**
 * The `Idempotency-Key` request header (IETF draft-ietf-httpapi-idempotency-key-header): a
 * Structured Field string, hence the quotes. Reflex puts the notification id in it, the same on
 * every retry and every replica, so a receiver that keeps the keys it has processed handles a
 * message once even when its answer to the first attempt was lost or came after the timeout.
 */
export function idempotencyKeyHeader(id: string): { 'idempotency-key': string } {
  return { 'idempotency-key': `"${id}"` };
}
