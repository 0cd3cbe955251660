/**
 * What a person may do with Reflex, each role including the ones before it: a viewer reads; an
 * operator also acts in the console (heal, release, retry, silence) and approves the actions a rule
 * holds for an operator; an admin also changes the queues (pause, resume, clean, retry), ends other
 * users' sessions and approves what a rule holds for an admin.
 */
export const roles = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof roles)[number];

/** Whether `role` may do what `needed` may (admin ⊃ operator ⊃ viewer). */
export const roleAtLeast = (role: Role, needed: Role): boolean => roles.indexOf(role) >= roles.indexOf(needed);
