/**
 * Seeds of histories that once broke a promise: every run of the promise checker runs them first
 * (docs/chaos.md lists what each found), so a fix that regresses is caught in CI's short form.
 */
export const regressionSeeds: readonly number[] = [];
