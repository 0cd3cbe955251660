import { daemonTexts } from '../daemon-texts.js';
import { asyncOp, sync, SimHttpError, type SimResponse } from '../envelope.js';
import { imageTarball } from '../guest/image-rootfs.js';
import { openImageTarball, type OpenedImage } from '../image-tarball.js';
import { fingerprintOf, type ImageFiles } from '../image-store.js';
import type { SimInstance, SimSnapshot } from '../instance-model.js';
import type { Router, SimRequest } from '../router.js';
import { formatTimestamp, zeroTime } from '../time.js';
import { bodyObject, filterOf, recursionOf, stringMap } from './common.js';

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
 * /1.0/images: list (filterable), upload (POST with the bytes, unified or split, or JSON to
 * publish an instance or snapshot), GET/PUT/PATCH/DELETE of one image, its export, and the aliases:
 * /1.0/images/aliases GET/POST, /1.0/images/aliases/<name> GET/DELETE (names may hold one slash).
 */
export function registerImages(router: Router): void {
  router.on('GET', '/1.0/images', list);
  router.on('POST', '/1.0/images', upload, { raw: true });
  router.on('GET', '/1.0/images/aliases', (req) => {
    const aliases = req.ctx.aliases.list();
    return sync(recursionOf(req) === 0 ? aliases.map((a) => `/1.0/images/aliases/${a.name}`) : aliases);
  });
  router.on('POST', '/1.0/images/aliases', (req) => {
    const body = bodyObject(req);
    if (typeof body.name !== 'string' || body.name === '') throw new SimHttpError(400, 'Alias name missing');
    const image = req.ctx.images.find(String(body.target ?? ''));
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
  router.on('PUT', '/1.0/images/:fingerprint', (req) => update(req, false));
  router.on('PATCH', '/1.0/images/:fingerprint', (req) => update(req, true));
  router.on('DELETE', '/1.0/images/:fingerprint', remove);
  router.on('GET', '/1.0/images/:fingerprint/export', exportImage);
}

function withAliases(req: SimRequest, img: Record<string, unknown>): Record<string, unknown> {
  return { ...img, aliases: req.ctx.aliases.of(String(img.fingerprint)) };
}

function list(req: SimRequest): SimResponse {
  const images = req.ctx.images.list().map((i) => withAliases(req, i));
  const predicate = filterOf(req);
  const hits = predicate ? images.filter(predicate) : images;
  return sync(recursionOf(req) === 0 ? hits.map((i) => `/1.0/images/${String(i.fingerprint)}`) : hits);
}

function get(req: SimRequest): SimResponse {
  const prefix = req.params.fingerprint!;
  return sync(withAliases(req, namedImage(req)), `"${prefix}"`);
}

/** The image a GET of it or its export names: Incus says which image is missing (`Image "x" not found`). */
function namedImage(req: SimRequest): Record<string, unknown> {
  const prefix = req.params.fingerprint!;
  if (req.ctx.images.matches(prefix)) return req.ctx.images.find(prefix);
  throw new SimHttpError(404, daemonTexts.imageNotFound(req.ctx.opts.revision, prefix, true));
}

/** PUT replaces, PATCH merges the writable fields: properties, public, auto_update, expires_at, profiles. */
function update(req: SimRequest, merge: boolean): SimResponse {
  const img = req.ctx.images.find(req.params.fingerprint!);
  const body = bodyObject(req);
  const properties = stringMap(body.properties, 'properties');
  if (properties) img.properties = merge ? { ...(img.properties as Record<string, string>), ...properties } : properties;
  else if (!merge) img.properties = {};
  if (typeof body.public === 'boolean' || !merge) img.public = body.public === true;
  if (typeof body.auto_update === 'boolean' || !merge) img.auto_update = body.auto_update === true;
  if (typeof body.expires_at === 'string') img.expires_at = body.expires_at;
  if (Array.isArray(body.profiles)) img.profiles = body.profiles.map(String);
  return sync({});
}

/** DELETE: async "Deleting image"; its aliases go with it. */
function remove(req: SimRequest): SimResponse {
  const { ctx } = req;
  const img = ctx.images.remove(req.params.fingerprint!);
  for (const a of ctx.aliases.of(String(img.fingerprint))) ctx.aliases.remove(a.name);
  ctx.guests.forgetImage(String(img.fingerprint));
  const op = ctx.ops.create({
    description: 'Deleting image',
    project: req.info.project,
    resources: { images: [`/1.0/images/${String(img.fingerprint)}`] },
  });
  op.running();
  setTimeout(() => op.succeed(), ctx.opts.timings.taskMs).unref();
  return asyncOp(op.url, ctx.ops.render(op));
}

/** GET …/export: the tarball (unified) or a multipart body of metadata and rootfs (split), as LXD serves them. */
function exportImage(req: SimRequest): SimResponse {
  const img = namedImage(req);
  const files = req.ctx.images.files(String(img.fingerprint));
  const fp = String(img.fingerprint);
  if (files.kind === 'unified')
    return {
      kind: 'file',
      contentType: 'application/octet-stream',
      body: files.data,
      headers: { 'Content-Disposition': `inline;filename=${fp}.tar.gz` },
    };
  const boundary = `reflexsim${fp.slice(0, 24)}`;
  const part = (name: string, filename: string, data: Buffer): Buffer =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      data,
      Buffer.from('\r\n'),
    ]);
  const body = Buffer.concat([
    part('metadata', `${fp}.tar.xz`, files.metadata),
    part('rootfs', `${fp}.squashfs`, files.rootfs),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
  return { kind: 'file', contentType: `multipart/form-data; boundary=${boundary}`, body };
}

/** What POST /1.0/images takes as a JSON request rather than an upload (LXD 5.0.2's `imagesPost`). */
const jsonSourceTypes = new Set(['container', 'instance', 'virtual-machine', 'snapshot', 'image', 'url']);

/**
 * The request of a POST /1.0/images, told apart as LXD 5.0.2 does (`imagesPost`): a body that
 * decodes as a JSON object is a request whatever its Content-Type (one whose `source.type` is
 * none of the known ones is 500 "Invalid images JSON"); any other body is an image upload unless
 * it was sent as `application/json` (then 400). pylxd's `client.images.create(data)` sends the
 * bytes with no Content-Type at all.
 */
function jsonRequest(req: SimRequest): Record<string, unknown> | undefined {
  const bytes = req.raw ?? Buffer.alloc(0);
  const type = String(req.headers['content-type'] ?? '');
  let parsed: unknown;
  try {
    parsed = bytes.length > 0 && !type.startsWith('multipart/') ? JSON.parse(bytes.toString('utf8')) : undefined;
  } catch (err) {
    if (type.startsWith('application/json')) throw new SimHttpError(400, `Failed to decode request body: ${(err as Error).message}`);
  }
  if (parsed === undefined || parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    if (type.startsWith('application/json')) throw new SimHttpError(400, 'Request body must be a JSON object');
    return undefined;
  }
  const body = parsed as Record<string, unknown>;
  const source = (body.source ?? {}) as Record<string, unknown>;
  if (!jsonSourceTypes.has(String(source.type ?? ''))) throw new SimHttpError(500, 'Invalid images JSON');
  return body;
}

/**
 * POST /1.0/images, always an operation "Downloading image" whose metadata ends with the
 * fingerprint and size (a string, as LXD writes it): the raw bytes of a unified image (any
 * Content-Type but JSON, with `X-LXD-*` / `X-Incus-*` headers for filename, public and
 * properties), a split image (multipart/form-data with parts `metadata` and `rootfs`), or JSON
 * `{"source": {"type": "instance" | "snapshot", "name": …}}` to publish a stopped instance or a
 * snapshot. An upload takes its architecture, creation date and properties from its
 * `metadata.yaml` (the headers' properties win), as the daemon does; a tarball the simulator
 * published (its export) brings its files back: an instance made from it starts with them. Images
 * from a remote server (`source.type` image or url) are not served.
 */
function upload(req: SimRequest): SimResponse {
  const { ctx } = req;
  // A publish packs the instance's files when the operation runs.
  let files: ImageFiles | (() => Promise<ImageFiles>);
  let fields: {
    filename: string;
    public: boolean;
    properties: Record<string, string>;
    aliases: { name: string; description: string }[];
    architecture?: string;
    createdAt?: string;
  };
  let fail: string | undefined;
  let published: { inst: SimInstance; snap: SimSnapshot | undefined } | undefined;
  let opening: Promise<OpenedImage> | undefined;
  const body = jsonRequest(req);
  if (!body) {
    files = uploadedFiles(req, req.raw ?? Buffer.alloc(0));
    // Read once, when the operation runs: its metadata, and the entries an instance made from it starts from.
    opening = openImageTarball(files.kind === 'unified' ? files.data : files.metadata);
    fields = {
      filename: header(req, 'filename') ?? '',
      public: header(req, 'public') === 'true',
      properties: headerProperties(req),
      aliases: [],
    };
  } else {
    const source = (body.source ?? {}) as Record<string, unknown>;
    const type = String(source.type ?? '');
    if (type !== 'instance' && type !== 'container' && type !== 'virtual-machine' && type !== 'snapshot')
      throw new SimHttpError(400, `Unsupported image source type "${type}": the simulator has no remote image servers`);
    const [name, snapName] = String(source.name ?? '').split('/', 2);
    const inst = ctx.store.find(req.info.project, name ?? '');
    if (!inst) throw new SimHttpError(404, daemonTexts.instanceNotFound(ctx.opts.revision, req.info.project, name ?? ''));
    if (type === 'snapshot' && (snapName === undefined || !inst.snapshots.has(snapName))) throw new SimHttpError(404, 'Instance not found');
    if (type !== 'snapshot' && inst.isActive) fail = 'Cannot export a running instance as an image';
    published = { inst, snap: snapName === undefined ? undefined : inst.snapshots.get(snapName) };
    const from = published;
    // A published image is a new tarball of the instance's files: its bytes (and fingerprint) differ every time.
    files = async () => ({ kind: 'unified', data: await publishedTarball(req, from.inst, from.snap, fields.properties) });
    const imageProps = Object.fromEntries(
      Object.entries(inst.config)
        .filter(([k]) => k.startsWith('image.'))
        .map(([k, v]) => [k.slice('image.'.length), v]),
    );
    const aliases = Array.isArray(body.aliases)
      ? (body.aliases as Record<string, unknown>[]).map((a) => ({ name: String(a.name ?? ''), description: String(a.description ?? '') }))
      : [];
    fields = {
      filename: typeof body.filename === 'string' ? body.filename : '',
      public: body.public === true,
      properties: stringMap(body.properties, 'properties') ?? imageProps,
      aliases,
    };
  }
  // LXD 5.0.2 creates the operation with no resources at all (null); Incus 6.0.4 with an empty set.
  const op = ctx.ops.create({ description: 'Downloading image', project: req.info.project, resources: ctx.opts.revision === 'later' ? {} : null });
  op.running();
  setTimeout(() => void store().catch((err: unknown) => op.fail((err as Error).message)), ctx.opts.timings.taskMs).unref();
  return asyncOp(op.url, ctx.ops.render(op));

  async function store(): Promise<void> {
    if (fail) return op.fail(fail);
    const opened = await opening;
    if (opened && 'error' in opened) return op.fail(opened.error);
    if (opened) {
      const meta = opened.metadata;
      fields = {
        ...fields,
        // The headers' properties over the tarball's.
        properties: { ...meta.properties, ...fields.properties },
        architecture: meta.architecture,
        createdAt: meta.creationDate === undefined ? undefined : formatTimestamp(BigInt(meta.creationDate) * 1_000_000_000n, ctx.opts.utcSuffix),
      };
    }
    const stored = typeof files === 'function' ? await files() : files;
    const fingerprint = fingerprintOf(stored);
    if (ctx.images.has(fingerprint)) return op.fail(`Image with same fingerprint already exists`);
    const size = stored.kind === 'unified' ? stored.data.length : stored.metadata.length + stored.rootfs.length;
    const now = ctx.ops.now();
    ctx.images.add(
      {
        auto_update: false,
        properties: fields.properties,
        public: fields.public,
        expires_at: zeroTime,
        profiles: ['default'],
        aliases: [],
        architecture: fields.architecture ?? fields.properties.architecture ?? 'x86_64',
        cached: false,
        filename: fields.filename,
        fingerprint,
        size,
        type: 'container',
        created_at: fields.createdAt ?? now,
        last_used_at: zeroTime,
        uploaded_at: now,
      },
      stored,
    );
    for (const a of fields.aliases) if (a.name) ctx.aliases.add({ name: a.name, description: a.description, target: fingerprint, type: 'container' });
    // The image is a tarball of a root filesystem: instances made from it start with its files.
    if (published) ctx.guests.publish(published.inst, published.snap, fingerprint);
    else if (stored.kind === 'unified' && opened) await ctx.guests.adoptImage(fingerprint, opened.entries);
    op.metadata = { fingerprint, size: String(size) };
    op.succeed();
  }
}

/**
 * The unified tarball a publish makes, as LXD 5.0.2 packs one: `metadata.yaml` (architecture,
 * creation date, the image's properties) and the instance's (or snapshot's) files under `rootfs/`,
 * so that its export uploaded again is the same image with the same files.
 */
async function publishedTarball(
  req: SimRequest,
  inst: SimInstance,
  snap: SimSnapshot | undefined,
  properties: Record<string, string>,
): Promise<Buffer> {
  const { ctx } = req;
  const created = new Date(ctx.ops.now());
  const yaml = [
    `architecture: ${JSON.stringify(properties.architecture ?? inst.config['image.architecture'] ?? 'x86_64')}`,
    `creation_date: ${Math.floor(created.getTime() / 1000)}`,
    'properties:',
    ...Object.entries(properties).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
    '',
  ].join('\n');
  return imageTarball(
    yaml,
    await ctx.guests.publishedFs(inst, snap),
    created,
    `reflex-sim publish ${inst.name}/${snap?.name ?? ''} ${ctx.ids.uuid()}`,
  );
}

/** An `X-LXD-<name>` header, or its Incus spelling `X-Incus-<name>`. */
function header(req: SimRequest, name: string): string | undefined {
  const v = req.headers[`x-lxd-${name}`] ?? req.headers[`x-incus-${name}`];
  return Array.isArray(v) ? v[0] : v;
}

/** `X-LXD-properties`: a query string (`os=busybox&release=1`). */
function headerProperties(req: SimRequest): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(header(req, 'properties') ?? ''));
}

/** The files of an upload: the body itself, or the `metadata` and `rootfs` parts of a multipart body. */
function uploadedFiles(req: SimRequest, raw: Buffer): ImageFiles {
  const type = String(req.headers['content-type'] ?? '');
  if (!type.startsWith('multipart/')) return { kind: 'unified', data: raw };
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (!boundary) throw new SimHttpError(400, 'Invalid multipart image: no boundary');
  const parts = new Map<string, Buffer>();
  const delimiter = Buffer.from(`--${boundary}`);
  let at = raw.indexOf(delimiter);
  while (at >= 0) {
    const next = raw.indexOf(delimiter, at + delimiter.length);
    if (next < 0) break;
    const chunk = raw.subarray(at + delimiter.length, next);
    const headerEnd = chunk.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const name = /name="([^"]+)"/.exec(chunk.subarray(0, headerEnd).toString('utf8'))?.[1];
      // The part's data ends before the CRLF that precedes the next delimiter.
      if (name) parts.set(name, chunk.subarray(headerEnd + 4, chunk.length - 2));
    }
    at = next;
  }
  const metadata = parts.get('metadata');
  const rootfs = parts.get('rootfs') ?? parts.get('rootfs.img');
  if (!metadata) throw new SimHttpError(400, 'Invalid multipart image: no metadata part');
  return rootfs ? { kind: 'split', metadata, rootfs } : { kind: 'unified', data: metadata };
}
