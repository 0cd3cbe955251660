/** The little of the npm oidc-provider (a dev dependency without types) the OIDC test uses. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown> & { findAccount?: (ctx: unknown, id: string) => Promise<Account> });
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
