/** The signals that ask a command to stop: what Kubernetes and `docker stop` send, and Ctrl-C. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

type SignalListener = (signal: NodeJS.Signals) => void;

/**
 * `listener` for the first signal only; the ones after it are ignored. For what a command says
 * about a signal it has already acted on: a supervisor that repeats its SIGTERM gets one log line,
 * not one per signal, and a signal leaves no work behind (a log line being written out) that would
 * keep the process from ending while the signals go on.
 */
export function firstOnly(listener: SignalListener): SignalListener {
  let heard = false;
  return (signal) => {
    if (heard) return;
    heard = true;
    listener(signal);
  };
}

/**
 * SIGTERM and SIGINT, caught from the program's first line until it exits. Node's default for
 * them is to end the process at once; with these handlers installed before anything else loads
 * and never removed, a signal that comes while the program starts, or after a run has finished
 * while its output is still being written, reaches the command (or waits for it) instead.
 */
export class StopSignals {
  private readonly pending: NodeJS.Signals[] = [];
  private listener?: SignalListener;

  constructor() {
    for (const signal of STOP_SIGNALS) process.on(signal, (received: NodeJS.Signals) => this.receive(received));
  }

  private receive(signal: NodeJS.Signals): void {
    if (this.listener === undefined) this.pending.push(signal);
    else this.listener(signal);
  }

  /** From now on every signal goes to `listener`; one that came while nobody listened is handed over first. */
  listen(listener: SignalListener): void {
    this.listener = listener;
    for (const signal of this.pending.splice(0)) listener(signal);
  }
}
