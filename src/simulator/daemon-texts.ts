import type { ApiRevision } from '../client/status-code.js';

/**
 * The daemons' own words for refusals that differ between LXD 5.0.2 (earlier revision) and Incus
 * 6.0.4 (later revision), each observed on the real daemon (test/conformance/error-channels.test.ts
 * holds the simulator to both).
 */
export const daemonTexts = {
  /** GET (and every call) on a missing instance: 404. */
  instanceNotFound(revision: ApiRevision, project: string, name: string): string {
    return revision === 'later' ? `Failed to fetch instance "${name}" in project "${project}": Instance not found` : 'Instance not found';
  },

  /** A missing snapshot of an existing instance: 404, the same for every method. */
  snapshotNotFound(revision: ApiRevision, project: string, instance: string, snap: string): string {
    const what = revision === 'later' ? 'Instance_snapshot' : 'InstanceSnapshot';
    return `Failed to fetch snapshot "${snap}" of instance "${instance}" in project "${project}": ${what} not found`;
  },

  /**
   * A missing image: 404. Incus names the image on a GET of it or its export, and says "Image not
   * found" like LXD 5.0.2 on a change or delete.
   */
  imageNotFound(revision: ApiRevision, image: string, naming: boolean): string {
    return revision === 'later' && naming ? `Image "${image}" not found` : 'Image not found';
  },

  /** A create naming an existing instance fails in its operation (the database refuses the row). */
  duplicateInstance(revision: ApiRevision): string {
    return revision === 'later'
      ? 'Failed creating instance record: Add instance info to the database: Failed to create "instances" entry: UNIQUE constraint failed: instances.project_id, instances.name'
      : 'Failed creating instance record: Add instance info to the database: This "instances" entry already exists';
  },

  /** A snapshot naming an existing one fails in its operation. */
  duplicateSnapshot(revision: ApiRevision, snap: string): string {
    const why =
      revision === 'later'
        ? 'Failed to create "instances_snapshots" entry: UNIQUE constraint failed: instances_snapshots.instance_id, instances_snapshots.name'
        : 'This "instances_snapshots" entry already exists';
    return `Failed creating instance snapshot record "${snap}": Add snapshot info to the database: ${why}`;
  },

  /** Restoring a snapshot that does not exist (in the operation). */
  restoreMissing(instance: string, snap: string): string {
    return `Snapshot ${instance}/${snap} does not exist`;
  },

  /** Renaming a running instance (in the operation). */
  renameRunning(revision: ApiRevision): string {
    return revision === 'later' ? 'Renaming of running instance not allowed' : 'Renaming of running container not allowed';
  },

  /**
   * Why a name is not a valid instance name (after "Invalid instance name: "), or undefined. LXD
   * 5.0.2 refuses a leading digit; Incus only a name that is a number.
   */
  instanceNameError(revision: ApiRevision, name: string): string | undefined {
    if (name.length < 1 || name.length > 63) return 'Name must be 1-63 characters long';
    if (name.startsWith('-')) return 'Name must not start with "-" character';
    if (name.endsWith('-')) return 'Name must not end with "-" character';
    if (revision === 'earlier' && /^[0-9]/.test(name)) return 'Name must not start with a number';
    if (revision === 'later' && /^[0-9]+$/.test(name)) return 'Name cannot be a number';
    if (!/^[a-zA-Z0-9-]+$/.test(name)) return 'Name can only contain alphanumeric and hyphen characters';
    return undefined;
  },

  /** The description of the default project and of its default profile. */
  defaultDescription(revision: ApiRevision, of: 'project' | 'profile'): string {
    return `Default ${revision === 'later' ? 'Incus' : 'LXD'} ${of}`;
  },
};
