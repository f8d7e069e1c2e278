import type { TaskConfig } from '../../config/task-schema.js';
import { StopAwareQueue } from '../../stop.js';
import type { RunRecords } from '../run-records.js';
import type { RunSignals } from '../run-signals.js';
import type { LaneDeps } from './context.js';
import type { ErpSystemLine } from './system-health.js';
import { SystemHealth, type Outage } from './system-health.js';
import { TaskLanes } from './task-lanes.js';

/**
 * A run's lanes: one TaskLanes per task, and the SAP systems they share (call slots and health).
 * A failure of the run's scope in any lane ends the sources' reading (RunSignals) and is thrown by
 * `drained`.
 */
export class Lanes {
  readonly tasks: TaskLanes[];
  /** Each system's call slots and places to claim ahead, shared by both its connections' lanes. */
  private readonly limits = new Map<string, { slots: StopAwareQueue; ahead: StopAwareQueue }>();
  /** Each system's connections, by system and transport. */
  private readonly systems = new Map<string, ErpSystemLine>();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly deps: LaneDeps,
    tasks: TaskConfig[],
    private readonly signals: RunSignals,
    records: RunRecords,
  ) {
    const run = {
      system: (name: string, transport: Outage['transport']) => this.system(name, transport),
      failed: (error: unknown) => this.fail(error),
    };
    this.tasks = tasks.map((task) => new TaskLanes(task, deps, this.sendsTo(task), run, records));
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

  private system(name: string, transport: Outage['transport']): ErpSystemLine {
    const key = `${name}\u0000${transport}`;
    let line = this.systems.get(key);
    if (line === undefined) {
      const calls = this.deps.system(name).maxConcurrentCalls;
      let limits = this.limits.get(name);
      if (limits === undefined) {
        limits = { slots: new StopAwareQueue(calls, this.deps.stop), ahead: new StopAwareQueue(calls, this.deps.stop) };
        this.limits.set(name, limits);
      }
      line = {
        name,
        calls,
        ...limits,
        health: new SystemHealth(name, transport, this.deps.now, this.deps.log, this.deps.stop),
      };
      this.systems.set(key, line);
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
    this.signals.endReading(error);
  }
}
