/** What a receiver posts: headers and the exact body bytes (signatures cover them as sent). */
export interface OutgoingRequest {
  headers: Record<string, string>;
  body: string;
  /** Where to post, when not the receiver's URL itself (Alertmanager's `/api/v2/alerts` under it). */
  url?: string;
}
