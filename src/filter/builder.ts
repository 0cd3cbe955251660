import type { FilterComparison, FilterExpr } from './ast.js';
import { assertPrintableField, assertPrintableValue, printFilter } from './printer.js';

/**
 * Safe construction of filter expressions: field names and values are checked when built, so
 * the printed string always parses back to the same expression (no injection through values).
 *
 * @example
 * const f = and(eq('status', 'Running'), not(eq('config.user.reflex.autorestart', 'false')));
 * printFilter(f) // 'status eq Running and not config.user.reflex.autorestart eq false'
 */
export function eq(field: string, value: string): FilterComparison {
  return compare(field, 'eq', value);
}

/** `field ne value`. */
export function ne(field: string, value: string): FilterComparison {
  return compare(field, 'ne', value);
}

/** `not expr`. */
export function not(expr: FilterExpr): FilterExpr {
  return { kind: 'not', expr };
}

/** Left-associative conjunction of one or more expressions. */
export function and(first: FilterExpr, ...rest: FilterExpr[]): FilterExpr {
  return rest.reduce<FilterExpr>((left, right) => ({ kind: 'and', left, right }), first);
}

/** Left-associative disjunction of one or more expressions. */
export function or(first: FilterExpr, ...rest: FilterExpr[]): FilterExpr {
  return rest.reduce<FilterExpr>((left, right) => ({ kind: 'or', left, right }), first);
}

function compare(field: string, op: 'eq' | 'ne', value: string): FilterComparison {
  assertPrintableField(field);
  assertPrintableValue(value);
  return { kind: 'compare', field, op, value };
}
