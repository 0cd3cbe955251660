import { lxc } from '../support/lxd-bed.js';

/** Where the real daemon serves HTTPS unless it already does elsewhere (as `scripts/lxd-testbed.sh --https`). */
export const LXD_HTTPS_ADDRESS = process.env.REFLEX_LXD_HTTPS ?? '127.0.0.1:8443';

/**
 * Makes the real daemon serve its HTTPS API (trust tokens and mutual-TLS tests need it) and
 * returns its origin. Idempotent; the setting is left in place, like the bed script leaves it.
 */
export async function ensureLxdHttps(): Promise<string> {
  let address = (await lxc(['config', 'get', 'core.https_address'])).trim();
  if (!address) {
    await lxc(['config', 'set', 'core.https_address', LXD_HTTPS_ADDRESS]);
    address = LXD_HTTPS_ADDRESS;
  }
  // A wildcard listener (":8443", "[::]:8443", "0.0.0.0:8443") is reached on loopback.
  const port = address.slice(address.lastIndexOf(':') + 1);
  const host = address.slice(0, address.lastIndexOf(':'));
  return `https://${!host || host === '[::]' || host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
}
