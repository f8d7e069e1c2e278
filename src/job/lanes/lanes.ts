import type { TaskConfig } from '../../config/task-schema.js';
import { StoppableLimit } from '../../stop.js';
import { claimTokens } from '../../status/transitions.js';
import type { TaskRecord } from '../records.js';
import type { LaneDeps } from './context.js';
import type { ErpSystemLine } from './lane.js';
import { SystemHealth, type Outage } from './system-health.js';
import { TaskLanes } from './task-lanes.js';

/**
 * A run's lanes: one TaskLanes per task, the SAP systems they share (call slots and health), the
 * claim tokens, and the run's halt. A failure of the run's scope in any lane halts the sources
 * (`halted`) and is thrown by `drained`.
 */
export class Lanes {
  readonly tasks: TaskLanes[];
  /** A new claim token for each claim of the run, the intake's included. */
  readonly token: () => string;
  private readonly systems = new Map<string, ErpSystemLine>();
  private readonly halt = new AbortController();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly deps: LaneDeps,
    tasks: TaskConfig[],
    onRecord: (task: TaskConfig, record: TaskRecord) => void,
  ) {
    this.token = claimTokens(deps.runId);
    const run = {
      system: (name: string) => this.system(name),
      token: this.token,
      failed: (error: unknown) => this.fail(error),
    };
    this.tasks = tasks.map(
      (task) => new TaskLanes(task, deps, this.sendsTo(task), run, (record) => onRecord(task, record)),
    );
  }

  /** Fires when a lane met a failure of the run's scope: no source reads on. */
  get halted(): AbortSignal {
    return this.halt.signal;
  }

  /** Every unit sent is settled; the first failure of the run's scope, if any, is thrown. */
  async drained(): Promise<void> {
    await Promise.all(this.tasks.map((task) => task.drained()));
    if (this.failure) throw this.failure.error;
  }

  /** What stopped a system's work, or a lane's, in this run. */
  outages(): Outage[] {
    const systems = [...this.systems.values()].flatMap(({ health }) => {
      const outage = health.outage();
      return outage === undefined ? [] : [outage];
    });
    return [...systems, ...this.tasks.flatMap((task) => task.outages())];
  }

  private system(name: string): ErpSystemLine {
    let line = this.systems.get(name);
    if (line === undefined) {
      const calls = this.deps.system(name).maxConcurrentCalls;
      line = {
        name,
        calls,
        slots: new StoppableLimit(calls, this.deps.stop),
        health: new SystemHealth(name, this.deps.now, this.deps.log),
      };
      this.systems.set(name, line);
    }
    return line;
  }

  /** The systems a task may send to: its own list, or every system with a connection for its transport. */
  private sendsTo(task: TaskConfig): string[] {
    const all = task.systems ?? this.deps.systemNames;
    return all.filter((name) => this.deps.erpFor(name, task.function) !== undefined);
  }

  private fail(error: unknown): void {
    this.failure ??= { error };
    this.halt.abort(error);
  }
}
