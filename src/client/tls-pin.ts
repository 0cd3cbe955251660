import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { ReflexError } from '../errors/reflex-error.js';

/**
 * Server-certificate pinning for HTTPS targets. The daemon's certificate is self-signed, so the
 * chain is not verified: the leaf's SHA-256 must equal the pin instead. This is stricter than
 * lxc, which adds servercerts/<remote>.crt to the CA pool (notes §7).
 */

/** Normalises a SHA-256 fingerprint (`AB:CD:…`, `abcd…`) to lowercase hex without colons. */
export function normalizeFingerprint(fp: string): string {
  return fp.replace(/[:\s]/g, '').toLowerCase();
}

/** SHA-256 fingerprint (lowercase hex) of the first certificate of a PEM text. */
export function certificateFingerprint(pem: string): string {
  return normalizeFingerprint(new X509Certificate(pem).fingerprint256);
}

/** The error for a certificate that does not match its pin; says what was expected and what was seen. */
export function pinMismatch(expected: string, seen: string | undefined, host: string): ReflexError {
  return new ReflexError(
    'TLS_PIN_MISMATCH',
    `server certificate of ${host} does not match the pinned certificate: expected SHA-256 ${expected}, server presented ${seen ?? 'no certificate'}`,
  );
}

/** Checks the peer certificate of a connected socket; returns the error to fail with, if any. */
export function checkPin(socket: TLSSocket, expected: string, host: string): ReflexError | undefined {
  const peer = socket.getPeerCertificate();
  const seen = peer && peer.fingerprint256 ? normalizeFingerprint(peer.fingerprint256) : undefined;
  return seen === expected ? undefined : pinMismatch(expected, seen, host);
}

/**
 * A `createConnection` for the `ws` package that pins the server certificate: the socket is
 * destroyed with TLS_PIN_MISMATCH on `secureConnect` before any response is read.
 */
export function pinnedTlsConnect(expected: string, client: { cert?: string; key?: string }) {
  return (opts: ConnectionOptions): TLSSocket => {
    const socket = tlsConnect({ ...opts, cert: client.cert, key: client.key, rejectUnauthorized: false });
    socket.once('secureConnect', () => {
      const err = checkPin(socket, expected, `${opts.host ?? opts.servername}:${opts.port}`);
      if (err) socket.destroy(err);
    });
    return socket;
  };
}
