import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { certificateFingerprint } from '../../src/client/tls-pin.js';
import { lxdBed } from '../support/daemon-bed.js';

const run = promisify(execFile);

/** Where the real daemon serves HTTPS unless it already does elsewhere (as `scripts/lxd-testbed.sh --https`). */
export const LXD_HTTPS_ADDRESS = process.env.REFLEX_LXD_HTTPS ?? '127.0.0.1:8443';

/**
 * Makes the real daemon serve its HTTPS API (trust tokens and mutual-TLS tests need it) and
 * returns its origin. Idempotent; the setting is left in place, like the bed script leaves it.
 */
export async function ensureLxdHttps(): Promise<string> {
  let address = (await lxdBed.cli(['config', 'get', 'core.https_address'])).trim();
  if (!address) {
    await lxdBed.cli(['config', 'set', 'core.https_address', LXD_HTTPS_ADDRESS]);
    address = LXD_HTTPS_ADDRESS;
  }
  // A wildcard listener (":8443", "[::]:8443", "0.0.0.0:8443") is reached on loopback.
  const port = address.slice(address.lastIndexOf(':') + 1);
  const host = address.slice(0, address.lastIndexOf(':'));
  return `https://${!host || host === '[::]' || host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
}

/** A client certificate and key made for a test, with the certificate's SHA-256. */
export interface TestIdentity {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
  fingerprint: string;
}

/** A fresh self-signed EC client certificate (openssl), named `cn`, in a new temporary directory. */
export async function makeIdentity(cn: string): Promise<TestIdentity> {
  const dir = mkdtempSync(join(tmpdir(), 'rt-identity-'));
  const certFile = join(dir, `${cn}.crt`);
  const keyFile = join(dir, `${cn}.key`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '2',
    '-subj',
    `/CN=${cn}`,
  ]);
  const cert = readFileSync(certFile, 'utf8');
  return { cert, key: readFileSync(keyFile, 'utf8'), certFile, keyFile, fingerprint: certificateFingerprint(cert) };
}

/** The real daemon's server certificate (PEM), read over the unix socket. */
export async function lxdServerCertificate(): Promise<string> {
  return (JSON.parse(await lxdBed.cli(['query', '/1.0'])) as { environment: { certificate: string } }).environment.certificate;
}
