import type { FilterExpr } from './ast.js';
import { filterKeywords } from './ast.js';
import { FilterSyntaxError } from './filter-syntax-error.js';

/**
 * True when a value must be written in double quotes: it contains whitespace, is empty, or ends
 * with `)` (which would otherwise close a group). LXD 5.0.2 rejects quoted values without a space
 * (notes §11), so nothing else is quoted.
 */
export function needsQuotes(value: string): boolean {
  return value.length === 0 || /\s/.test(value) || value.endsWith(')');
}

/** Throws FilterSyntaxError when a field name cannot be written in the language. */
export function assertPrintableField(field: string): void {
  if (field.length === 0 || /[\s"()]/.test(field) || filterKeywords.has(field)) {
    throw new FilterSyntaxError(`field name ${JSON.stringify(field)} cannot be expressed in a filter`, 0);
  }
}

/** Throws FilterSyntaxError when a value cannot be written in the language (it holds a double quote). */
export function assertPrintableValue(value: string): void {
  if (value.includes('"')) throw new FilterSyntaxError(`value ${JSON.stringify(value)} cannot contain a double quote`, 0);
}

/**
 * Prints the canonical string of an expression: single spaces, no redundant parentheses (the
 * left operand of and/or never needs them; a binary right operand or `not` operand does), values
 * quoted only when needsQuotes says so. parseFilter(printFilter(e)) deep-equals e.
 */
export function printFilter(expr: FilterExpr): string {
  switch (expr.kind) {
    case 'compare': {
      assertPrintableField(expr.field);
      assertPrintableValue(expr.value);
      const value = needsQuotes(expr.value) ? `"${expr.value}"` : expr.value;
      return `${expr.field} ${expr.op} ${value}`;
    }
    case 'text':
      assertPrintableValue(expr.text);
      return needsQuotes(expr.text) || filterKeywords.has(expr.text) ? `"${expr.text}"` : expr.text;
    case 'not':
      return `not ${group(expr.expr)}`;
    case 'and':
    case 'or':
      return `${printFilter(expr.left)} ${expr.kind} ${group(expr.right)}`;
  }
}

function group(expr: FilterExpr): string {
  return expr.kind === 'and' || expr.kind === 'or' ? `(${printFilter(expr)})` : printFilter(expr);
}
