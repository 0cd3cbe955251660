/**
 * The abstract syntax of the seed's filter language (OData-like; seed §4.4).
 *
 * `a or b and c` parses left-associatively as `(a or b) and c`; `not` applies to the single
 * clause or parenthesised group that follows it.
 */
export type FilterExpr = FilterComparison | FilterNot | FilterBinary;

/** The comparison operators the language defines. */
export type FilterOperator = 'eq' | 'ne';

/** `field op value`, e.g. `config.user.role eq web`. */
export interface FilterComparison {
  readonly kind: 'compare';
  /** Dotted attribute path, e.g. `devices.root.path`; see evaluator.ts for how dots resolve. */
  readonly field: string;
  readonly op: FilterOperator;
  readonly value: string;
}

/** `not <expr>`. */
export interface FilterNot {
  readonly kind: 'not';
  readonly expr: FilterExpr;
}

/** `<left> and|or <right>`. */
export interface FilterBinary {
  readonly kind: 'and' | 'or';
  readonly left: FilterExpr;
  readonly right: FilterExpr;
}

/** Words with a meaning of their own in clause position; they cannot be used as field names. */
export const filterKeywords: ReadonlySet<string> = new Set(['and', 'or', 'not']);
