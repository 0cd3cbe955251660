import type { ApiRevision } from '../client/status-code.js';
import type { ClusterMembers } from './cluster.js';
import { daemonTexts } from './daemon-texts.js';
import { SimHttpError } from './envelope.js';
import type { IdSource } from './ids.js';
import { loopbackAddress } from './guest/guest-address.js';
import { SimInstance, type InstanceObserver, type InstanceType } from './instance-model.js';
import { ProfileStore } from './profile-store.js';

/** What a new instance starts with. */
export interface NewInstance {
  name: string;
  project?: string;
  type?: InstanceType;
  config?: Record<string, string>;
  devices?: Record<string, Record<string, string>>;
  profiles?: string[];
  ephemeral?: boolean;
  description?: string;
  createdAt: string;
  /** Fingerprint of the image it was made from (volatile.base_image); the busybox image when absent. */
  baseImage?: string;
  /** Cluster member to place it on (`?target=`); the next Online one when absent. Ignored outside cluster mode. */
  target?: string;
}

/**
 * All instances, indexed by project then name (insertion order = listing order), so lookups are
 * O(1) and listings never scan other projects.
 */
export class InstanceStore {
  private readonly byProject = new Map<string, Map<string, SimInstance>>();
  /** Names reserved by creations whose database step has not run yet: taken, but not visible. */
  private readonly reserved = new Set<string>();
  /** Projects and profiles; a profile change re-renders every instance. */
  readonly profiles: ProfileStore;
  /** Instances ever made: each gets the guest address of its number, kept through renames, never reused. */
  private made = 0;

  /**
   * `projects`: extra projects besides `default` (they use the profiles of `default`); `cluster`
   * places new instances; `revision` chooses the daemon's wording and volatile keys; `observer` is
   * told of every instance's changes.
   */
  constructor(
    projects: readonly string[],
    private readonly ids: IdSource,
    private readonly cluster?: ClusterMembers,
    readonly revision: ApiRevision = 'earlier',
    private readonly observer?: InstanceObserver,
  ) {
    this.profiles = new ProfileStore(() => this.touchAll(), revision);
    for (const p of projects) if (p !== 'default') this.profiles.createProject(p, '', { 'features.profiles': 'false' });
  }

  /** Names of all projects. */
  get projects(): string[] {
    return this.profiles.projectNames();
  }

  /** 404 "Project not found" for an unknown project. */
  assertProject(project: string): void {
    this.profiles.project(project);
  }

  /** The instance, or 404 "Instance not found" (in the revision's words). */
  get(project: string, name: string): SimInstance {
    const inst = this.byProject.get(project)?.get(name);
    if (!inst) throw new SimHttpError(404, daemonTexts.instanceNotFound(this.revision, project, name));
    return inst;
  }

  /** The instance or undefined. */
  find(project: string, name: string): SimInstance | undefined {
    return this.byProject.get(project)?.get(name);
  }

  /** Instances of one project, or of all projects when project is null. */
  list(project: string | null): SimInstance[] {
    if (project !== null) return [...(this.byProject.get(project)?.values() ?? [])];
    return [...this.byProject.values()].flatMap((m) => [...m.values()]);
  }

  /** Total count over all projects. */
  get size(): number {
    let n = 0;
    for (const m of this.byProject.values()) n += m.size;
    return n;
  }

  /** 400 "Invalid instance name: …" in the daemon's words, for a name it would refuse. */
  checkName(name: string): void {
    const err = daemonTexts.instanceNameError(this.revision, name);
    if (err) throw new SimHttpError(400, `Invalid instance name: ${err}`);
  }

  /** Whether the name is taken in the project, by an instance or by a creation still on its way. */
  taken(project: string, name: string): boolean {
    return this.byProject.get(project)?.has(name) === true || this.reserved.has(`${project}/${name}`);
  }

  /** Reserves a name for a creation until its database step (see {@link taken}); the returned function releases it. */
  reserve(project: string, name: string): () => void {
    const key = `${project}/${name}`;
    this.reserved.add(key);
    return () => this.reserved.delete(key);
  }

  /** Adds an instance with the daemon's volatile keys; 400 for a bad name, 409 when it exists. */
  add(spec: NewInstance): SimInstance {
    const project = spec.project ?? 'default';
    this.assertProject(project);
    this.checkName(spec.name);
    let map = this.byProject.get(project);
    if (!map) this.byProject.set(project, (map = new Map()));
    if (map.has(spec.name)) throw new SimHttpError(409, `Instance "${spec.name}" already exists`);
    const location = this.cluster?.place(spec.target) ?? 'none';
    const idmap =
      '[{"Isuid":true,"Isgid":false,"Hostid":1000000,"Nsid":0,"Maprange":1000000000},{"Isuid":false,"Isgid":true,"Hostid":1000000,"Nsid":0,"Maprange":1000000000}]';
    const image: Record<string, string> =
      spec.config && Object.keys(spec.config).some((k) => k.startsWith('image.'))
        ? {}
        : {
            'image.architecture': 'x86_64',
            'image.description': 'Reflex test bed (busybox, /sbin/testinit)',
            'image.os': 'busybox',
            'image.release': 'v1.35.0',
            'image.reflex.revision': '1',
          };
    const uuid = this.ids.uuid();
    const config: Record<string, string> = {
      ...image,
      ...spec.config,
      'volatile.apply_template': 'create',
      'volatile.base_image': spec.baseImage ?? 'c5c2a8b7a0f1d6e0b3e2f1a9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9',
      'volatile.cloud-init.instance-id': this.ids.uuid(),
      'volatile.idmap.base': '0',
      'volatile.idmap.next': idmap,
      'volatile.last_state.idmap': '[]',
      'volatile.uuid': uuid,
      // Incus marks the generation of an instance's storage with the uuid it was created with.
      ...(this.revision === 'later' ? { 'volatile.uuid.generation': uuid } : {}),
    };
    const inst = new SimInstance(spec.name, project, spec.type ?? 'container', spec.createdAt, config);
    inst.expandProfiles = (names) => this.profiles.expand(project, names);
    inst.location = location;
    inst.guestAddress = loopbackAddress(++this.made);
    inst.observer = this.observer;
    // Every NIC (own or from a profile) gets a MAC address at creation, as LXD assigns one.
    const nics = { ...inst.expandProfiles(spec.profiles ?? ['default']).devices, ...spec.devices };
    for (const [dev, d] of Object.entries(nics)) if (d.type === 'nic') config[`volatile.${dev}.hwaddr`] = this.ids.hwaddr();
    if (spec.devices) inst.devices = spec.devices;
    if (spec.profiles) inst.profiles = spec.profiles;
    inst.ephemeral = spec.ephemeral ?? false;
    inst.description = spec.description ?? '';
    map.set(spec.name, inst);
    return inst;
  }

  /** Re-renders every instance (after a profile change). */
  touchAll(): void {
    for (const m of this.byProject.values()) for (const inst of m.values()) inst.touch();
  }

  /** Removes an instance. */
  remove(inst: SimInstance): void {
    this.byProject.get(inst.project)?.delete(inst.name);
    inst.observer?.removed(inst);
  }

  /** Renames in place, keeping the listing position at the end like a fresh database row. */
  rename(inst: SimInstance, newName: string): void {
    this.checkName(newName);
    const map = this.byProject.get(inst.project)!;
    if (map.has(newName)) throw new SimHttpError(409, `Instance "${newName}" already exists`);
    map.delete(inst.name);
    inst.name = newName;
    inst.touch();
    map.set(newName, inst);
  }
}
