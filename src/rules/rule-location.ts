import { readFile } from 'node:fs/promises';
import type TS from 'typescript';

/** Where in a rule file something is: 1-based line and column. */
export interface SourcePlace {
  line: number;
  column: number;
}

/**
 * Finds where a rule file writes one action entry of one rule (`actions[index]` of the object
 * literal whose `name` is `rule`), and in it the param a schema complained about: the param's own
 * line when it is written out, else the entry's, else the rule's `name:`. Undefined when the rule
 * is not a literal the parser can see (a computed name, a rule built by a helper in another file).
 *
 * The file is parsed with TypeScript (loaded only when there is a problem to place): a search of
 * the text for the rule's name would take a comment or another rule's string for it, and would
 * miss a rule whose `name` comes after its `actions`.
 */
export async function placeOfActionParam(file: string, rule: string, index: number, paramKeys: string[]): Promise<SourcePlace | undefined> {
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
  const unwrap = (e: TS.Expression): TS.Expression => (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e) ? unwrap(e.expression) : e);

  let found: SourcePlace | undefined;
  const visit = (node: TS.Node): void => {
    if (found) return;
    if (ts.isObjectLiteralExpression(node)) {
      const name = property(node, 'name');
      const actions = property(node, 'actions');
      const literal = name && unwrap(name.initializer);
      if (actions && literal && (ts.isStringLiteral(literal) || ts.isNoSubstitutionTemplateLiteral(literal)) && literal.text === rule) {
        found = place(name!);
        const list = unwrap(actions.initializer);
        const entry = ts.isArrayLiteralExpression(list) ? list.elements[index] : undefined;
        if (!entry) return;
        found = place(entry);
        const spec = unwrap(entry as TS.Expression);
        const params = ts.isObjectLiteralExpression(spec) ? property(spec, 'params') : undefined;
        if (!params) return;
        found = place(params);
        const values = unwrap(params.initializer);
        if (!ts.isObjectLiteralExpression(values)) return;
        const at = paramKeys.map((k) => property(values, k)).find((p) => p !== undefined);
        if (at) found = place(at);
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function propertyName(ts: typeof TS, name: TS.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name) || ts.isNumericLiteral(name) ? name.text : undefined;
}
