import { fillPlaceholders, placeholders } from '../notify/placeholders.js';

/**
 * Placeholders in the `http` action's URL and body, in the `{name.path}` form receivers' title
 * templates and audit links use: `{event.kind}`, `{instance.status}`,
 * `{instance.config.user.tier}`, `{incident.id}`. Params travel as JSON in the action job, so a
 * template is text, never a function.
 */

/** The roots a placeholder may start with. */
export const templateRoots = ['event', 'instance', 'incident'] as const;
export type TemplateRoot = (typeof templateRoots)[number];

/** What the placeholders are filled from. `instance` is read only when a placeholder names it. */
export type TemplateValues = Record<TemplateRoot, unknown>;

/** Every string in a value (an object body's strings, recursively). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

/** The placeholders of a template whose root is not one of {@link templateRoots} (empty when it is valid). */
export function unknownPlaceholders(template: unknown): string[] {
  return strings(template).flatMap((s) =>
    placeholders(s)
      .filter((p) => !isRoot(p.name))
      .map((p) => p.text),
  );
}

/** Whether a template names a root (so the instance is read only when a placeholder needs it). */
export function namesRoot(template: unknown, root: TemplateRoot): boolean {
  return strings(template).some((s) => placeholders(s).some((p) => p.name === root));
}

/**
 * The value at a dotted path. Keys may hold dots themselves (config keys such as `user.tier`):
 * at each level the longest run of parts that is a key wins.
 */
function lookup(value: unknown, parts: string[]): unknown {
  let at = value;
  let i = 0;
  while (i < parts.length) {
    if (!at || typeof at !== 'object') return undefined;
    let j = parts.length;
    while (j > i && !Object.hasOwn(at, parts.slice(i, j).join('.'))) j--;
    if (j === i) return undefined;
    at = (at as Record<string, unknown>)[parts.slice(i, j).join('.')];
    i = j;
  }
  return at;
}

function isRoot(name: string): name is TemplateRoot {
  return (templateRoots as readonly string[]).includes(name);
}

function valueOf(values: TemplateValues, root: TemplateRoot, path: string | undefined): unknown {
  return lookup(values[root], path ? path.split('.') : []);
}

function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A text with its placeholders filled in (objects as JSON, nothing for a missing value); `encode` applies to each value (URLs). */
export function fillText(template: string, values: TemplateValues, encode: (s: string) => string = (s) => s): string {
  return fillPlaceholders(template, ({ name, path }) => (isRoot(name) ? encode(text(valueOf(values, name, path))) : undefined));
}

/**
 * A JSON body template filled in: each string filled as {@link fillText}, except a string that is
 * one placeholder alone, which becomes the value itself (`{ "event": "{event}" }` embeds the event
 * as an object; a missing value is null).
 */
export function fillJson(template: unknown, values: TemplateValues): unknown {
  if (typeof template === 'string') {
    const [only] = placeholders(template);
    if (only && only.text === template && isRoot(only.name)) return valueOf(values, only.name, only.path) ?? null;
    return fillText(template, values);
  }
  if (Array.isArray(template)) return template.map((v) => fillJson(v, values));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fillJson(v, values)]));
  return template;
}
