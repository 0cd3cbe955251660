/**
 * Raised by the filter parser, printer and builder for anything that is not a valid filter
 * expression. `position` is the 0-based character offset in the input where the problem was
 * found (the input length when the expression ended too early).
 */
export class FilterSyntaxError extends Error {
  readonly code = 'FILTER_SYNTAX' as const;
  readonly position: number;

  constructor(message: string, position: number) {
    super(`${message} (at position ${position})`);
    this.name = 'FilterSyntaxError';
    this.position = position;
  }
}
