/** One check of `reflex doctor`: what was checked, whether it passed, and what to do if not. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
  /** Passed, but with something to know (a daemon difference that matters to rules). */
  warning?: boolean;
}
