import { SimHttpError } from './envelope.js';

/** An image alias as GET /1.0/images/aliases/<name> shows it. */
export interface SimImageAlias {
  name: string;
  description: string;
  target: string;
  type: 'container' | 'virtual-machine';
}

/**
 * Image aliases: the ones the built-in images come with, plus those clients create
 * (`lxc image alias create`). Images themselves are fixed (handlers/images.ts).
 */
export class ImageAliases {
  private readonly aliases = new Map<string, SimImageAlias>();

  constructor(images: readonly Record<string, unknown>[]) {
    for (const img of images) {
      for (const a of img.aliases as { name: string; description: string }[]) {
        this.aliases.set(a.name, {
          name: a.name,
          description: a.description,
          target: String(img.fingerprint),
          type: img.type as SimImageAlias['type'],
        });
      }
    }
  }

  /** Every alias, in creation order. */
  list(): SimImageAlias[] {
    return [...this.aliases.values()];
  }

  /** The alias, or 404 "Image alias not found"; `type` restricts it like `?type=`. */
  get(name: string, type?: string): SimImageAlias {
    const alias = this.aliases.get(name);
    if (!alias || (type && alias.type !== type)) throw new SimHttpError(404, 'Image alias not found');
    return alias;
  }

  /** Aliases pointing at an image. */
  of(fingerprint: string): { name: string; description: string }[] {
    return this.list()
      .filter((a) => a.target === fingerprint)
      .map((a) => ({ name: a.name, description: a.description }));
  }

  /** Creates an alias; 409 when the name is taken. */
  add(alias: SimImageAlias): void {
    if (this.aliases.has(alias.name)) throw new SimHttpError(409, 'Alias already exists');
    this.aliases.set(alias.name, alias);
  }

  /** Deletes an alias, or 404. */
  remove(name: string): void {
    this.get(name);
    this.aliases.delete(name);
  }
}
