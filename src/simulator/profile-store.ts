import type { ApiRevision } from '../client/status-code.js';
import { daemonTexts } from './daemon-texts.js';
import { SimHttpError } from './envelope.js';
import type { Devices } from './instance-model.js';

/** A profile: config and devices merged into the expanded config of the instances using it. */
export interface SimProfile {
  name: string;
  description: string;
  config: Record<string, string>;
  devices: Devices;
}

/** A project: its features decide whether it has profiles of its own. */
export interface SimProject {
  name: string;
  description: string;
  config: Record<string, string>;
}

/** The default profile of a fresh simulator: a root disk on pool `default` and a NIC on the fake bridge `lxdbr0`. */
export function defaultProfile(project = 'default', revision: ApiRevision = 'earlier'): SimProfile {
  const description = daemonTexts.defaultDescription(revision, 'profile');
  return {
    name: 'default',
    description: project === 'default' ? description : `${description} for project ${project}`,
    config: {},
    devices: {
      eth0: { name: 'eth0', network: 'lxdbr0', type: 'nic' },
      root: { path: '/', pool: 'default', type: 'disk' },
    },
  };
}

/** Names LXD accepts for profiles and projects (no slashes, not empty, not "." or ".."). */
function checkName(kind: 'Profile' | 'Project', name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new SimHttpError(400, `No name provided`);
  if (name.includes('/') || name === '.' || name === '..') throw new SimHttpError(400, `Invalid ${kind.toLowerCase()} name "${name}"`);
  return name;
}

/**
 * Projects and their profiles. A project created with `features.profiles=true` (LXD's default for
 * new projects) has its own profiles starting with an empty `default`; otherwise it uses those of
 * project `default`. Every change calls `onChange`, which re-renders the instances whose expanded
 * config depends on it.
 */
export class ProfileStore {
  private readonly projects = new Map<string, SimProject>();
  private readonly profiles = new Map<string, Map<string, SimProfile>>();

  constructor(
    private readonly onChange: () => void,
    private readonly revision: ApiRevision = 'earlier',
  ) {
    this.projects.set('default', {
      name: 'default',
      description: daemonTexts.defaultDescription(revision, 'project'),
      config:
        revision === 'later'
          ? {
              'features.images': 'true',
              'features.networks': 'true',
              'features.networks.zones': 'true',
              'features.profiles': 'true',
              'features.storage.buckets': 'true',
              'features.storage.volumes': 'true',
            }
          : { 'features.images': 'true', 'features.networks': 'true', 'features.profiles': 'true', 'features.storage.volumes': 'true' },
    });
    this.profiles.set('default', new Map([['default', defaultProfile('default', revision)]]));
  }

  /** Project names in creation order. */
  projectNames(): string[] {
    return [...this.projects.keys()];
  }

  /** The project, or 404 "Project not found". */
  project(name: string): SimProject {
    const p = this.projects.get(name);
    if (!p) throw new SimHttpError(404, 'Project not found');
    return p;
  }

  /** Whether the project exists. */
  hasProject(name: string): boolean {
    return this.projects.has(name);
  }

  /** Creates a project; features default to true as `lxc project create` gets them. */
  createProject(name: unknown, description = '', config: Record<string, string> = {}): SimProject {
    const n = checkName('Project', name);
    if (this.projects.has(n)) throw new SimHttpError(409, `Error inserting "${n}" into database: The project already exists`);
    const project: SimProject = {
      name: n,
      description,
      config: {
        'features.images': 'true',
        'features.profiles': 'true',
        // Incus 6.0 sets the buckets feature on a new project too (the simulator serves no buckets).
        ...(this.revision === 'later' ? { 'features.storage.buckets': 'true' } : {}),
        'features.storage.volumes': 'true',
        ...config,
      },
    };
    this.projects.set(n, project);
    if (project.config['features.profiles'] === 'true')
      this.profiles.set(n, new Map([['default', { ...defaultProfile(n, this.revision), devices: {} }]]));
    return project;
  }

  /** Removes a project (the caller has checked it is empty). */
  deleteProject(name: string): void {
    if (name === 'default') throw new SimHttpError(400, 'The "default" project cannot be deleted');
    this.project(name);
    this.projects.delete(name);
    this.profiles.delete(name);
  }

  /** The project whose profiles a project uses. */
  profileProject(project: string): string {
    return this.profiles.has(project) ? project : 'default';
  }

  /** Profiles visible in a project. */
  listProfiles(project: string): SimProfile[] {
    return [...this.profiles.get(this.profileProject(project))!.values()];
  }

  /** The profile, or 404 "Profile not found". */
  profile(project: string, name: string): SimProfile {
    const p = this.profiles.get(this.profileProject(project))?.get(name);
    if (!p) throw new SimHttpError(404, 'Profile not found');
    return p;
  }

  /** Creates a profile. */
  createProfile(project: string, name: unknown, description: string, config: Record<string, string>, devices: Devices): SimProfile {
    const n = checkName('Profile', name);
    const map = this.profiles.get(this.profileProject(project))!;
    // Both daemons answer a duplicate profile with the database's error, a 500.
    if (map.has(n)) throw new SimHttpError(500, `Error inserting "${n}" into database: The profile already exists`);
    const profile: SimProfile = { name: n, description, config, devices };
    map.set(n, profile);
    return profile;
  }

  /** Replaces (PUT) or merges (PATCH) a profile's fields. */
  updateProfile(
    project: string,
    name: string,
    change: { description?: string; config?: Record<string, string>; devices?: Devices },
    merge: boolean,
  ): void {
    const p = this.profile(project, name);
    if (change.description !== undefined) p.description = change.description;
    if (merge) {
      if (change.config) p.config = { ...p.config, ...change.config };
      if (change.devices) p.devices = { ...p.devices, ...change.devices };
    } else {
      p.config = change.config ?? {};
      p.devices = change.devices ?? {};
    }
    this.onChange();
  }

  /** Renames a profile. */
  renameProfile(project: string, name: string, newName: unknown): void {
    const p = this.profile(project, name);
    const n = checkName('Profile', newName);
    if (name === 'default') throw new SimHttpError(403, 'The "default" profile cannot be renamed');
    const map = this.profiles.get(this.profileProject(project))!;
    if (map.has(n)) throw new SimHttpError(409, `Name "${n}" already in use`);
    map.delete(name);
    p.name = n;
    map.set(n, p);
    this.onChange();
  }

  /** Deletes a profile (the caller has checked it is unused). */
  deleteProfile(project: string, name: string): void {
    this.profile(project, name);
    if (name === 'default') throw new SimHttpError(403, 'The "default" profile cannot be deleted');
    this.profiles.get(this.profileProject(project))!.delete(name);
  }

  /**
   * Config and devices of a profile list applied in order (later profiles win), as LXD expands an
   * instance. Unknown profiles are skipped.
   */
  expand(project: string, names: readonly string[]): { config: Record<string, string>; devices: Devices } {
    const config: Record<string, string> = {};
    const devices: Devices = {};
    const map = this.profiles.get(this.profileProject(project));
    for (const n of names) {
      const p = map?.get(n);
      if (!p) continue;
      Object.assign(config, p.config);
      Object.assign(devices, structuredClone(p.devices));
    }
    return { config, devices };
  }
}
