/**
 * The abstract syntax of the seed's filter language (OData-like; seed §4.4).
 *
 * `a or b and c` parses left-associatively as `(a or b) and c`; `not` applies to the single
 * clause or parenthesised group that follows it.
 */
export type FilterExpr = FilterComparison | FilterNot | FilterBinary | FilterText;

/**
 * The comparison operators the language defines: `eq`/`ne` everywhere; the ordering ones
 * (`gt`, `ge`, `lt`, `le`, on numbers) only where the parser is asked for the console's extended
 * language (the daemon's own filtering knows eq and ne only).
 */
export type FilterOperator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

/** The ordering operators of the extended language. */
export const orderingOperators: ReadonlySet<string> = new Set(['gt', 'ge', 'lt', 'le']);

/** A bare word of the extended language: matches an object whose `name` contains it (any case), e.g. `inst-00042`. */
export interface FilterText {
  readonly kind: 'text';
  readonly text: string;
}

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
