import { createHash } from 'node:crypto';

/**
 * Which live replica runs a probe: rendezvous (highest random weight) hashing of the probe's id over
 * the live members, so every replica computes the same owner from the same roster, and a replica
 * that leaves moves only its own probes (spread evenly over the others). Answers cached per roster.
 */
export class ProbeOwner {
  private members: string[] = [];
  private readonly owners = new Map<string, string>();

  /** Sets the live members; a change forgets the cached owners. */
  setMembers(members: string[]): void {
    const sorted = [...members].sort();
    if (sorted.join('\n') === this.members.join('\n')) return;
    this.members = sorted;
    this.owners.clear();
  }

  /** The member that runs probe `id`; undefined while the roster is empty. */
  ownerOf(id: string): string | undefined {
    const known = this.owners.get(id);
    if (known !== undefined) return known;
    let best: string | undefined;
    let bestScore = -1;
    for (const m of this.members) {
      const score = createHash('sha1').update(`${m}\n${id}`).digest().readUInt32BE(0);
      if (score > bestScore) [best, bestScore] = [m, score];
    }
    if (best !== undefined) this.owners.set(id, best);
    return best;
  }
}
