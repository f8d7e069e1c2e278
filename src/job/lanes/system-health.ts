import type { StopAwareQueue } from '../../stop.js';
import { errorMessage, UncertainError, type Connect2ErpError } from '../../../common/errors.js';
import type { Logger } from '../../log.js';

/**
 * What stopped an ERP system's work in a run, or one lane of it, for the report, the page and the
 * metrics: `unavailable` may pass by itself (the next run tries again), `refused` needs a person.
 */
export interface Outage {
  system: string;
  /** The connection that failed: a system's RFC and Rest connections have addresses and logons of their own. */
  transport: 'RFC' | 'Rest';
  /** The task whose lane stopped; absent when the whole connection did. */
  task?: string;
  kind: 'unavailable' | 'refused';
  reason: string;
}

/**
 * Calls in a row that could not reach a system before its breaker opens: after one or two, the
 * lanes go on trying. Whatever did not reach SAP is left for the next run either way, and a run
 * whose last call to a system failed reports the outage, as nothing answered after it.
 */
const OPEN_AFTER = 3;
/** After the breaker opens, the first probe waits this long, each failed one twice as long again, up to a minute. */
const FIRST_PROBE_MS = 5_000;
const LAST_PROBE_MS = 60_000;

/**
 * One SAP system's connection (RFC or Rest) in a run, shared by the lanes that use it: a circuit
 * breaker. A refusal of the connector (logon, certificate, SICF) opens it for the run, as only a
 * person can change it. Calls that do not reach it (connection refused, 503, the connection's
 * time-out) open it after OPEN_AFTER in a row: then no call goes out, and a lane with a document to
 * send probes it (RFC_PING, the service document) at most every FIRST_PROBE_MS, doubling to
 * LAST_PROBE_MS, on the run's clock; a probe SAP answers closes it. Whatever did not reach SAP was
 * released with no attempt charged.
 */
export class SystemHealth {
  private failures = 0;
  /** The last failure not followed by an answer: the outage the run reports, if nothing answers after it. */
  private last: Connect2ErpError | undefined;
  private refused: Connect2ErpError | undefined;
  private open = false;
  private probeAt = 0;
  private probeDelayMs = FIRST_PROBE_MS;
  private probing: Promise<boolean> | undefined;

  constructor(
    readonly name: string,
    readonly transport: Outage['transport'],
    private readonly now: () => Date,
    private readonly log: Logger,
    private readonly stop: AbortSignal,
  ) {}

  /** No call to the system goes out: it refused the connector, or its breaker is open. */
  get down(): boolean {
    return this.refused !== undefined || this.open;
  }

  /** Why calls do not go out, for the records of the documents left unsent. */
  get reason(): string {
    return this.refused === undefined
      ? `ERP system ${this.name} unavailable (${errorMessage(this.last)})`
      : `ERP system ${this.name} refused the connector (${this.refused.message})`;
  }

  /** Whether a call may go out now: closed, or open and a probe due now finds the system answering. */
  async admits(probe: () => Promise<unknown>): Promise<boolean> {
    if (this.refused !== undefined) return false;
    if (!this.open) return true;
    if (this.now().getTime() < this.probeAt) return false;
    this.probing ??= this.tryProbe(probe).finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  /** SAP answered a call: whatever failed before was a blip, and the breaker closes. */
  answered(): void {
    this.failures = 0;
    this.last = undefined;
    this.open = false;
    this.probeDelayMs = FIRST_PROBE_MS;
  }

  /** A call the system did not take (a `system`-scope error). */
  failed(error: Connect2ErpError): void {
    if (!error.transient) {
      if (this.refused === undefined) this.log.error('ERP system refused the connector', this.fields(error));
      this.refused ??= error;
      return;
    }
    this.last = error;
    this.failures += 1;
    if (this.open || this.failures < OPEN_AFTER) return;
    this.open = true;
    this.probeAt = this.now().getTime() + this.probeDelayMs;
    this.log.error('ERP system unavailable', { ...this.fields(error), failures: this.failures });
  }

  /** The outage of the run, if the system refused it or did not answer again after its last failure. */
  outage(): Outage | undefined {
    const { name: system, transport } = this;
    if (this.refused !== undefined) return { system, transport, kind: 'refused', reason: this.refused.message };
    if (this.last !== undefined) return { system, transport, kind: 'unavailable', reason: this.last.message };
    return undefined;
  }

  private async tryProbe(probe: () => Promise<unknown>): Promise<boolean> {
    try {
      await probe();
    } catch (error) {
      // The run is stopping (the probe refused before it was sent, or its answer no longer counts): nothing is learnt.
      if (this.stop.aborted) return false;
      // Any answer of SAP's is an answer (RFC_PING refused for want of S_RFC, say); a time-out is none.
      const failure = error as Connect2ErpError;
      if (failure.scope === 'system' || failure instanceof UncertainError) {
        this.failed(failure);
        this.probeDelayMs = Math.min(this.probeDelayMs * 2, LAST_PROBE_MS);
        this.probeAt = this.now().getTime() + this.probeDelayMs;
        return false;
      }
    }
    this.answered();
    this.log.warn('ERP system answers again', { system: this.name, transport: this.transport });
    return true;
  }

  private fields(error: Connect2ErpError): Record<string, unknown> {
    return { system: this.name, transport: this.transport, reason: error.message };
  }
}

/**
 * One SAP system in a run: its call slots (`maxConcurrentCalls`) and as many places for units
 * claimed ahead of a slot, both shared by every lane that calls it, and its health.
 */
export interface ErpSystemLine {
  name: string;
  calls: number;
  slots: StopAwareQueue;
  ahead: StopAwareQueue;
  health: SystemHealth;
}
