/**
 * The one placeholder syntax of Reflex's text templates: `{name}` or `{name.path}` (`{status}`,
 * `{group.severity}`, `{instance.config.user.tier}`). Receivers' title templates, audit links and
 * the `http` action's URL and body all read it here; each says what its names mean.
 */
const placeholder = /\{([A-Za-z]+)(?:\.([^{}\s]+))?\}/g;

/** One placeholder of a template: the text as written, its name and the dotted path after it. */
export interface Placeholder {
  text: string;
  name: string;
  path?: string;
}

/** The placeholders of a template, in order. */
export function placeholders(template: string): Placeholder[] {
  return [...template.matchAll(placeholder)].map(([text, name, path]) => ({ text, name: name!, ...(path !== undefined ? { path } : {}) }));
}

/**
 * The template with each placeholder replaced by what `value` answers for it; a placeholder it
 * answers undefined for stays as written.
 */
export function fillPlaceholders(template: string, value: (p: Placeholder) => string | undefined): string {
  return template.replace(placeholder, (text, name: string, path?: string) => value({ text, name, ...(path !== undefined ? { path } : {}) }) ?? text);
}
