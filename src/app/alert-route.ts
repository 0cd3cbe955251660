import type { AlertInput } from '../notify/alert.js';
import type { AlertsView } from '../notify/alert-board.js';
import type { Notifier } from '../notify/notifier.js';

/** An alert as Reflex's parts raise it (the notifier adds the labels). */
type RaisedAlert = Omit<AlertInput, 'labels'>;

/**
 * Where this process's alerts go: the notifier the worker root builds from the receivers of the
 * rule set. The parts built before it (the rule errors) or without it (the scheduler, the Redis
 * watch, the dashboard) reach it here; a process with no notifier audits its alerts only.
 */
export class AlertRoute {
  private notifier: Notifier | undefined;

  /** Sets the notifier; called once, by the worker root. */
  use(notifier: Notifier | undefined): void {
    this.notifier = notifier;
  }

  /** The notifier, if there is one (the rule errors' alert sink). */
  get sink(): Notifier | undefined {
    return this.notifier;
  }

  /** Forwards an alert to the receivers; undefined while there is no notifier. */
  get raiseAlert(): ((a: RaisedAlert) => Promise<unknown>) | undefined {
    const notifier = this.notifier;
    return notifier && ((a: RaisedAlert) => notifier.notify({ ...a, labels: {} }));
  }

  /** Forwards an alert if there is a notifier by then; nothing to do otherwise. */
  readonly raise = (a: RaisedAlert): Promise<unknown> => this.raiseAlert?.(a) ?? Promise.resolve();

  /** The alerts board as the dashboard shows it; undefined without a notifier. */
  get view(): (() => Promise<AlertsView>) | undefined {
    const notifier = this.notifier;
    return notifier && (() => notifier.board.view(notifier.mute));
  }
}
