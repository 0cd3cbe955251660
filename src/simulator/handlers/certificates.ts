import { asyncOp, sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { SimContext } from '../context.js';
import type { SimOperation } from '../operations.js';
import type { Router, SimRequest } from '../router.js';
import { zeroTime } from '../time.js';
import { bodyObject, recursionOf } from './common.js';

/** /1.0/certificates: trust store listing, adding (certificate or token), token issuance, removal. */
export function registerCertificates(router: Router): void {
  router.on('GET', '/1.0/certificates', list);
  router.on('POST', '/1.0/certificates', add, { untrusted: true });
  router.on('GET', '/1.0/certificates/:fingerprint', (req) => {
    const cert = req.ctx.trust.get(req.params.fingerprint!);
    if (!cert) throw new SimHttpError(404, 'Certificate not found');
    return sync(cert);
  });
  router.on('DELETE', '/1.0/certificates/:fingerprint', (req) => {
    if (!req.ctx.trust.remove(req.params.fingerprint!)) throw new SimHttpError(404, 'Certificate not found');
    return sync({});
  });
}

function list(req: SimRequest): SimResponse {
  const certs = req.ctx.trust.list();
  return sync(recursionOf(req) === 0 ? certs.map((c) => `/1.0/certificates/${c.fingerprint}`) : certs);
}

/** LXD sends the certificate as base64 DER; PEM is accepted too. */
function toPem(cert: string): string {
  if (cert.includes('BEGIN CERTIFICATE')) return cert;
  const b64 = cert.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;
}

function add(req: SimRequest): SimResponse {
  const { ctx, info } = req;
  const body = bodyObject(req);
  const name = typeof body.name === 'string' ? body.name : 'client';
  if (!info.trusted) {
    // An untrusted client may redeem a token (or its secret), or give the trust password,
    // presenting its own certificate. The incus client sends its token as `trust_token`; LXD 5.0.2
    // knows only `password`, but both revisions take either, so both clients can join both.
    const password =
      typeof body.trust_token === 'string' && body.trust_token !== '' ? body.trust_token : typeof body.password === 'string' ? body.password : '';
    if (!info.clientCertPem || password === '') throw new SimHttpError(403, 'not authorized');
    const trustPassword = ctx.opts.revision === 'earlier' ? ctx.opts.trustPassword : undefined;
    if (trustPassword !== undefined && password === trustPassword) {
      ctx.trust.add(info.clientCertPem, name);
      return sync({});
    }
    const secret = secretOf(password);
    const token = secret ? ctx.trust.takeToken(secret) : undefined;
    if (!token) throw new SimHttpError(403, 'not authorized');
    ctx.trust.add(info.clientCertPem, token.clientName);
    const op = ctx.ops.list(null).find((o) => o.id === token.operationId);
    op?.succeed();
    return sync({});
  }
  if (body.token === true) return issueToken(req, name);
  if (typeof body.certificate !== 'string' || body.certificate === '') throw new SimHttpError(400, 'Client is already trusted');
  const cert = typeof body.certificate === 'string' && body.certificate !== '' ? toPem(body.certificate) : info.clientCertPem;
  if (!cert) throw new SimHttpError(400, "Can't use TLS data on non-TLS link");
  try {
    ctx.trust.add(cert, name);
  } catch {
    throw new SimHttpError(400, 'Invalid certificate material');
  }
  return sync({});
}

/** A token is base64 of JSON {client_name, fingerprint, addresses, secret, expires_at}; the bare secret also works. */
function secretOf(password: string): string | undefined {
  if (/^[0-9a-f]{64}$/.test(password)) return password;
  try {
    const parsed = JSON.parse(Buffer.from(password, 'base64').toString('utf8')) as { secret?: unknown };
    return typeof parsed.secret === 'string' ? parsed.secret : undefined;
  } catch {
    return undefined;
  }
}

/** POST {"token": true}: an operation of class token, Running and cancellable until redeemed or revoked. */
function issueToken(req: SimRequest, clientName: string): SimResponse {
  const op = createTrustToken(req.ctx, clientName);
  return asyncOp(op.url, req.ctx.ops.render(op));
}

/** Creates a pending trust token for `clientName` (the operation holds it; `tokenString` encodes it). */
export function createTrustToken(ctx: SimContext, clientName: string): SimOperation {
  // LXD refuses tokens without an HTTPS listener; the simulator issues them (with no addresses)
  // so unix-only test setups can exercise token operations.
  const secret = ctx.ids.secret();
  const fingerprint = ctx.serverTls?.fingerprint ?? '';
  const addresses = ctx.serverTls?.addresses ?? [];
  const op = ctx.ops.create({
    description: 'Generating trust token',
    class: 'token',
    mayCancel: true,
    resources: {},
    metadata: {
      request: { name: clientName, type: 'client', restricted: false, projects: null, certificate: '', password: '', token: true },
      secret,
      fingerprint,
      addresses,
      expiresAt: zeroTime,
    },
  });
  op.running();
  ctx.trust.addToken({ clientName, secret, operationId: op.id, expiresAt: '9999-12-31T23:59:59Z' });
  return op;
}

/** The token string a client passes to `lxc remote add`, for an operation's metadata. */
export function tokenString(metadata: Record<string, unknown>, clientName: string): string {
  return Buffer.from(
    JSON.stringify({
      client_name: clientName,
      fingerprint: metadata.fingerprint,
      addresses: metadata.addresses,
      secret: metadata.secret,
      expires_at: zeroTime,
    }),
  ).toString('base64');
}
