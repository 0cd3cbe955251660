import { readFile } from 'node:fs/promises';
import type TS from 'typescript';

/** Where in a rule file something is: 1-based line and column. */
export interface SourcePlace {
  line: number;
  column: number;
}

/** A rule file parsed, and the object literal of each rule it writes out, by the rule's `name`. */
interface ParsedRuleFile {
  ts: typeof TS;
  place(node: TS.Node): SourcePlace;
  property(obj: TS.ObjectLiteralExpression, key: string): TS.PropertyAssignment | undefined;
  unwrap(e: TS.Expression): TS.Expression;
  rule(name: string): TS.ObjectLiteralExpression | undefined;
}

/**
 * Parses a rule file with TypeScript (loaded only when there is a problem to place): a search of
 * the text for a rule's name would take a comment or another rule's string for it, and would miss
 * a rule whose `name` comes after the field at fault. Undefined when the file cannot be read.
 */
async function parseRuleFile(file: string): Promise<ParsedRuleFile | undefined> {
  const ts = (await import('typescript')).default;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const place = (node: TS.Node): SourcePlace => {
    const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
    return { line: line + 1, column: character + 1 };
  };
  const property = (obj: TS.ObjectLiteralExpression, key: string): TS.PropertyAssignment | undefined =>
    obj.properties.find((p): p is TS.PropertyAssignment => ts.isPropertyAssignment(p) && propertyName(ts, p.name) === key);
  const unwrap = (e: TS.Expression): TS.Expression =>
    ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e) ? unwrap(e.expression) : e;
  const rule = (name: string): TS.ObjectLiteralExpression | undefined => {
    let found: TS.ObjectLiteralExpression | undefined;
    const visit = (node: TS.Node): void => {
      if (found) return;
      if (ts.isObjectLiteralExpression(node)) {
        const named = property(node, 'name');
        const literal = named && unwrap(named.initializer);
        if (
          literal &&
          (property(node, 'actions') || property(node, 'on')) &&
          (ts.isStringLiteral(literal) || ts.isNoSubstitutionTemplateLiteral(literal)) &&
          literal.text === name
        ) {
          found = node;
          return;
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  };
  return { ts, place, property, unwrap, rule };
}

/**
 * Finds where a rule file writes one field of one rule (the object literal whose `name` is
 * `rule`), by the field's path in the definition (`['crashLoop', 'maxRestarts']`, `['on', 0,
 * 'kind']`): the deepest part of the path written out as a literal, else the rule's `name:`.
 * Undefined when the rule is not a literal the parser can see (a computed name, a rule built by a
 * helper in another file).
 */
export async function placeOfRuleField(file: string, rule: string, path: readonly (string | number)[]): Promise<SourcePlace | undefined> {
  const parsed = await parseRuleFile(file);
  const literal = parsed?.rule(rule);
  if (!parsed || !literal) return undefined;
  const { ts, place, property, unwrap } = parsed;
  let found = place(property(literal, 'name')!);
  let node: TS.Expression = literal;
  for (const step of path) {
    let next: TS.Node | undefined;
    if (ts.isObjectLiteralExpression(node) && typeof step === 'string') next = property(node, step);
    else if (ts.isArrayLiteralExpression(node) && typeof step === 'number') next = node.elements[step];
    if (!next) break;
    found = place(next);
    node = unwrap(ts.isPropertyAssignment(next) ? next.initializer : (next as TS.Expression));
  }
  return found;
}

/**
 * Finds where a rule file writes one action entry of one rule (`actions[index]`), and in it the
 * param a schema complained about: the param's own line when it is written out, else the entry's,
 * else the rule's `name:` (see {@link placeOfRuleField}).
 */
export async function placeOfActionParam(file: string, rule: string, index: number, paramKeys: string[]): Promise<SourcePlace | undefined> {
  const parsed = await parseRuleFile(file);
  const literal = parsed?.rule(rule);
  if (!parsed || !literal) return undefined;
  const { ts, place, property, unwrap } = parsed;
  const key = paramKeys.find((k) => {
    const actions = property(literal, 'actions');
    const list = actions && unwrap(actions.initializer);
    const entry = list && ts.isArrayLiteralExpression(list) ? list.elements[index] : undefined;
    const spec = entry && unwrap(entry as TS.Expression);
    const params = spec && ts.isObjectLiteralExpression(spec) ? property(spec, 'params') : undefined;
    const values = params && unwrap(params.initializer);
    return values !== undefined && ts.isObjectLiteralExpression(values) && property(values, k) !== undefined;
  });
  return placeOfRuleField(file, rule, key === undefined ? ['actions', index, 'params'] : ['actions', index, 'params', key]);
}

function propertyName(ts: typeof TS, name: TS.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name) || ts.isNumericLiteral(name)
    ? name.text
    : undefined;
}
