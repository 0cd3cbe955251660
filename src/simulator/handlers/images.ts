import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { zeroTime } from '../time.js';
import { bodyObject, filterOf, recursionOf } from './common.js';

const created = '2026-11-22T06:30:00Z';

/**
 * The images the simulator holds: the busybox test image of the real test bed (aliases `busybox`
 * and `reflex-busybox`, the test bed's own alias, so tests written for the bed run unchanged), plus
 * a remote-cached one.
 */
export const simImages: Record<string, unknown>[] = [
  image(
    'c5c2a8b7a0f1d6e0b3e2f1a9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9',
    ['busybox', 'reflex-busybox'],
    { architecture: 'x86_64', description: 'Reflex test bed (busybox, /sbin/testinit)', os: 'busybox', release: 'v1.35.0', 'reflex.revision': '1' },
    undefined,
  ),
  image(
    '0d3b2c4a5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809',
    ['debian/12'],
    { architecture: 'x86_64', description: 'Debian bookworm amd64', os: 'Debian', release: 'bookworm' },
    {
      alias: 'debian/12',
      certificate: '',
      image_type: 'container',
      protocol: 'simplestreams',
      server: 'https://images.linuxcontainers.org',
    },
  ),
];

function image(
  fingerprint: string,
  aliases: string[],
  properties: Record<string, string>,
  updateSource: Record<string, string> | undefined,
): Record<string, unknown> {
  const img: Record<string, unknown> = {
    auto_update: updateSource !== undefined,
    properties,
    public: false,
    expires_at: zeroTime,
    profiles: ['default'],
    aliases: aliases.map((name) => ({ name, description: '' })),
    architecture: 'x86_64',
    cached: updateSource !== undefined,
    filename: `${aliases[0]!.replace('/', '-')}.tar.gz`,
    fingerprint,
    size: 1_234_567,
    type: 'container',
    created_at: created,
    last_used_at: zeroTime,
    uploaded_at: created,
  };
  if (updateSource) img.update_source = updateSource;
  return img;
}

/**
 * GET /1.0/images (filterable), GET /1.0/images/<fingerprint>, and the aliases:
 * /1.0/images/aliases GET/POST, /1.0/images/aliases/<name> GET/DELETE (names may hold one slash).
 */
export function registerImages(router: Router): void {
  router.on('GET', '/1.0/images', list);
  router.on('GET', '/1.0/images/aliases', (req) => {
    const aliases = req.ctx.aliases.list();
    return sync(recursionOf(req) === 0 ? aliases.map((a) => `/1.0/images/aliases/${a.name}`) : aliases);
  });
  router.on('POST', '/1.0/images/aliases', (req) => {
    const body = bodyObject(req);
    if (typeof body.name !== 'string' || body.name === '') throw new SimHttpError(400, 'Alias name missing');
    const image = findImage(String(body.target ?? ''));
    req.ctx.aliases.add({
      name: body.name,
      description: typeof body.description === 'string' ? body.description : '',
      target: String(image.fingerprint),
      type: image.type as 'container',
    });
    return sync({});
  });
  for (const path of ['/1.0/images/aliases/:name', '/1.0/images/aliases/:a/:b']) {
    const nameOf = (req: SimRequest): string => req.params.name ?? `${req.params.a}/${req.params.b}`;
    router.on('GET', path, (req) => sync(req.ctx.aliases.get(nameOf(req), req.info.query.get('type') ?? undefined)));
    router.on('DELETE', path, (req) => (req.ctx.aliases.remove(nameOf(req)), sync({})));
  }
  router.on('GET', '/1.0/images/:fingerprint', get);
}

/** The image a fingerprint prefix names, or 404 "Image not found". */
export function findImage(prefix: string): Record<string, unknown> {
  const hits = prefix === '' ? [] : simImages.filter((i) => String(i.fingerprint).startsWith(prefix));
  if (hits.length !== 1) throw new SimHttpError(404, 'Image not found');
  return hits[0]!;
}

function withAliases(req: SimRequest, img: Record<string, unknown>): Record<string, unknown> {
  return { ...img, aliases: req.ctx.aliases.of(String(img.fingerprint)) };
}

function list(req: SimRequest): SimResponse {
  const images = simImages.map((i) => withAliases(req, i));
  const predicate = filterOf(req);
  const hits = predicate ? images.filter(predicate) : images;
  return sync(recursionOf(req) === 0 ? hits.map((i) => `/1.0/images/${String(i.fingerprint)}`) : hits);
}

function get(req: SimRequest): SimResponse {
  const prefix = req.params.fingerprint!;
  return sync(withAliases(req, findImage(prefix)), `"${prefix}"`);
}
