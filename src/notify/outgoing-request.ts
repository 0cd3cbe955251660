/** What a receiver posts: headers and the exact body bytes (signatures cover them as sent). */
export interface OutgoingRequest {
  headers: Record<string, string>;
  body: string;
}
