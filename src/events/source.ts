/** Splits `/1.0/instances/NAME[/...][?project=X]` into instance name and project; a bad %-escape throws URIError. */
export function parseSource(source: string): { instance?: string; project?: string } {
  const [path = '', query = ''] = source.split('?');
  const m = /^\/1\.0\/(?:instances|containers|virtual-machines)\/([^/]+)/.exec(path);
  const project = new URLSearchParams(query).get('project') ?? undefined;
  return { instance: m?.[1] ? decodeURIComponent(m[1]) : undefined, project };
}
