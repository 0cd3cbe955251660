import { X509Certificate, createHash } from 'node:crypto';

/** A trusted client certificate as GET /1.0/certificates shows it. */
export interface TrustedCertificate {
  name: string;
  type: 'client';
  restricted: boolean;
  projects: string[];
  certificate: string;
  fingerprint: string;
}

/** A pending trust token (an operation of class token owns it). */
export interface PendingToken {
  clientName: string;
  secret: string;
  operationId: string;
  expiresAt: string;
}

/** SHA-256 fingerprint (lowercase hex) of a PEM or DER certificate. */
export function certificateFingerprint(cert: string | Buffer): string {
  const der = typeof cert === 'string' ? new X509Certificate(cert).raw : cert;
  return createHash('sha256').update(der).digest('hex');
}

/**
 * The simulator's trust store: client certificates allowed in over HTTPS, and pending trust tokens.
 * The unix socket bypasses it (the local user is trusted, as with LXD).
 */
export class TrustStore {
  private readonly certs = new Map<string, TrustedCertificate>();
  private readonly tokens = new Map<string, PendingToken>();

  /** Trusts a PEM certificate; returns its fingerprint. */
  add(pem: string, name = 'client'): string {
    const fingerprint = certificateFingerprint(pem);
    this.certs.set(fingerprint, { name, type: 'client', restricted: false, projects: [], certificate: pem, fingerprint });
    return fingerprint;
  }

  /** Whether a fingerprint is trusted. */
  has(fingerprint: string | undefined): boolean {
    return fingerprint !== undefined && this.certs.has(fingerprint);
  }

  /** Removes a certificate by fingerprint (or unique prefix); false when absent. */
  remove(fingerprint: string): boolean {
    const full = this.resolve(fingerprint);
    return full !== undefined && this.certs.delete(full);
  }

  /** The certificate whose fingerprint starts with the given prefix. */
  get(prefix: string): TrustedCertificate | undefined {
    const full = this.resolve(prefix);
    return full === undefined ? undefined : this.certs.get(full);
  }

  /** All trusted certificates. */
  list(): TrustedCertificate[] {
    return [...this.certs.values()];
  }

  /** Registers a token secret. */
  addToken(token: PendingToken): void {
    this.tokens.set(token.secret, token);
  }

  /** Consumes a token by its secret (single use); undefined when unknown or expired. */
  takeToken(secret: string): PendingToken | undefined {
    const t = this.tokens.get(secret);
    if (!t) return undefined;
    this.tokens.delete(secret);
    return Date.parse(t.expiresAt) < Date.now() ? undefined : t;
  }

  /** Revokes the token of an operation. */
  revokeToken(operationId: string): void {
    for (const [secret, t] of this.tokens) if (t.operationId === operationId) this.tokens.delete(secret);
  }

  private resolve(prefix: string): string | undefined {
    if (this.certs.has(prefix)) return prefix;
    const hits = [...this.certs.keys()].filter((k) => k.startsWith(prefix));
    return hits.length === 1 ? hits[0] : undefined;
  }
}
