import type { SimInstance } from '../instance-model.js';

/** One file of an exec's recorded output. */
export interface ExecRecord {
  body: Buffer;
  modified: Date;
}

/**
 * The output of exec requests made with `record-output` (and without websockets): per instance,
 * `exec_<operation id>.stdout` and `.stderr`, kept until deleted or until the instance is gone,
 * as the daemon keeps them in its log directory (LXD 5.0.2) or the instance's `exec-output`
 * directory (Incus 6.0).
 */
export class ExecRecords {
  private readonly records = new WeakMap<SimInstance, Map<string, ExecRecord>>();

  /** Records an exec's output; returns the two file names (fd 1, fd 2). */
  record(inst: SimInstance, operationId: string, stdout: Buffer, stderr: Buffer): [string, string] {
    let files = this.records.get(inst);
    if (!files) this.records.set(inst, (files = new Map()));
    const modified = new Date();
    const names: [string, string] = [`exec_${operationId}.stdout`, `exec_${operationId}.stderr`];
    files.set(names[0], { body: stdout, modified });
    files.set(names[1], { body: stderr, modified });
    return names;
  }

  /** The instance's recorded files, by name. */
  names(inst: SimInstance): string[] {
    return [...(this.records.get(inst)?.keys() ?? [])];
  }

  get(inst: SimInstance, name: string): ExecRecord | undefined {
    return this.records.get(inst)?.get(name);
  }

  /** Deletes a file; false when there was none. */
  delete(inst: SimInstance, name: string): boolean {
    return this.records.get(inst)?.delete(name) ?? false;
  }
}
