import { sync, SimHttpError, type SimResponse } from '../envelope.js';
import type { Router, SimRequest } from '../router.js';
import { zeroTime } from '../time.js';
import { filterOf, recursionOf } from './common.js';

const created = '2026-11-22T06:30:00Z';

/** The images the simulator holds: the busybox test image of the real test bed, plus a remote-cached one. */
export const simImages: Record<string, unknown>[] = [
  image('c5c2a8b7a0f1d6e0b3e2f1a9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9', 'busybox', { architecture: 'x86_64', description: 'busybox', os: 'busybox', release: '1.35' }, undefined),
  image('0d3b2c4a5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809', 'debian/12', { architecture: 'x86_64', description: 'Debian bookworm amd64', os: 'Debian', release: 'bookworm' }, {
    alias: 'debian/12',
    certificate: '',
    image_type: 'container',
    protocol: 'simplestreams',
    server: 'https://images.linuxcontainers.org',
  }),
];

function image(fingerprint: string, alias: string, properties: Record<string, string>, updateSource: Record<string, string> | undefined): Record<string, unknown> {
  const img: Record<string, unknown> = {
    auto_update: updateSource !== undefined,
    properties,
    public: false,
    expires_at: zeroTime,
    profiles: ['default'],
    aliases: [{ name: alias, description: '' }],
    architecture: 'x86_64',
    cached: updateSource !== undefined,
    filename: `${alias.replace('/', '-')}.tar.gz`,
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

/** GET /1.0/images (filterable) and GET /1.0/images/<fingerprint>. */
export function registerImages(router: Router): void {
  router.on('GET', '/1.0/images', list);
  router.on('GET', '/1.0/images/:fingerprint', get);
}

function list(req: SimRequest): SimResponse {
  const predicate = filterOf(req);
  const images = predicate ? simImages.filter(predicate) : simImages;
  return sync(recursionOf(req) === 0 ? images.map((i) => `/1.0/images/${String(i.fingerprint)}`) : images);
}

function get(req: SimRequest): SimResponse {
  const prefix = req.params.fingerprint!;
  const hits = simImages.filter((i) => String(i.fingerprint).startsWith(prefix));
  if (hits.length !== 1) throw new SimHttpError(404, 'Image not found');
  return sync(hits[0], `"${prefix}"`);
}
