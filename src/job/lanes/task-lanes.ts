import type { TaskConfig, UseCase } from '../../config/task-schema.js';
import { callFor } from '../../config/templates.js';
import type { CallAdapter } from '../calls/execute.js';
import { callAdapter } from '../calls/adapter.js';
import { afterLink, type AfterLink } from '../calls/after-link.js';
import type { RunRecords } from '../run-records.js';
import type { LaneDeps, TaskContext } from './context.js';
import { Lane } from './lane.js';
import type { ErpSystemLine, Outage } from './system-health.js';
import { Waiters } from './waiters.js';
import type { Claim } from '../claims/claim.js';
import { release } from './settle.js';

/** What a task's lanes take from the run: its systems, where a run-scope failure goes. */
interface LaneRun {
  system: (name: string, transport: Outage['transport']) => ErpSystemLine;
  failed: (error: unknown) => void;
}

/**
 * One task's lanes, one per SAP system its documents name, made as documents come. Its sources
 * read on while one of its lanes has room (a system met so far has fewer units waiting than slots,
 * so each slot has its next call ready), and stop reading once every system it may send to is down.
 */
export class TaskLanes {
  readonly ctx: TaskContext;
  /** When the task's first document reached it (performance.now()), for its duration. */
  startedAt: number | undefined;
  private readonly lanes = new Map<string, Lane>();
  private readonly waiters = new Waiters();
  private readonly call;

  constructor(
    readonly task: TaskConfig,
    deps: LaneDeps,
    /** The systems the task may send to: its `systems`, or every system with a connection for its transport. */
    readonly systems: string[],
    private readonly run: LaneRun,
    records: RunRecords,
  ) {
    this.call = callFor(task);
    this.ctx = {
      task,
      call: this.call.call,
      deps: { ...deps, log: deps.log.child({ task: task.name }) },
      records,
      now: deps.now,
    };
  }

  /** The lane of `system`, made on first use. */
  lane(system: string): Lane {
    let lane = this.lanes.get(system);
    if (lane === undefined) {
      lane = new Lane(this.ctx, this.run.system(system, this.task.function), this.adapter(system), this.after(system), {
        roomChanged: () => this.waiters.wake(),
        failed: this.run.failed,
      });
      this.lanes.set(system, lane);
    }
    return lane;
  }

  /** A document reached the task: its time starts. */
  touch(): void {
    this.startedAt ??= performance.now();
  }

  /** Every system the task may send to is down, or its lane stopped: nothing more can go out. */
  get allDown(): boolean {
    return this.systems.every((name) => !this.canSend(name));
  }

  /** Whether the intake hands this task the documents of `useCase` it labels for `system`: its use case, and one of its `systems` when it lists them. */
  takes(useCase: UseCase, system: string): boolean {
    const { task } = this;
    return task.useCase === useCase && (task.systems === undefined || task.systems.includes(system));
  }

  /** Whether a document of `system` could go out now: the task may send to it, and neither the system nor its lane is down. */
  canSend(system: string): boolean {
    if (!this.systems.includes(system)) return false;
    return !(this.run.system(system, this.task.function).health.down || this.lanes.get(system)?.down === true);
  }

  /**
   * Claims the intake wrote for this task that no lane took: back to READY, no attempt charged, each
   * with its record. After a failure of the run's scope the writes may fail too: what cannot be
   * given back stays claimed until its claim expires, and the run reports its own failure.
   */
  async giveBack(left: Claim[], message: string): Promise<void> {
    await Promise.allSettled(left.map(async (claim) => this.ctx.records.task(await release(this.ctx, claim, message))));
  }

  /** Resolves once the task may read its next page: a lane that is not down has room, or none has been met. */
  room(stop: AbortSignal): Promise<void> {
    return this.waiters.until(() => this.hasRoom(), stop);
  }

  async drained(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((lane) => lane.drained()));
  }

  /** The lanes that stopped on their own (their function module refused, or dumping on every document). */
  outages(): Outage[] {
    return [...this.lanes.values()].flatMap((lane) => (lane.outage === undefined ? [] : [lane.outage]));
  }

  private hasRoom(): boolean {
    const live = [...this.lanes.values()].filter((lane) => !lane.down);
    return live.length === 0 || live.some((lane) => lane.hasRoom);
  }

  private after(system: string): AfterLink | undefined {
    const { deps } = this.ctx;
    const erp = { RFC: deps.erpFor(system, 'RFC'), Rest: deps.erpFor(system, 'Rest') };
    return afterLink(this.task, deps.system(system), erp, deps.now);
  }

  private adapter(system: string): CallAdapter {
    const { deps } = this.ctx;
    return callAdapter(this.call, deps.system(system), deps.erpFor, deps.client, deps.now);
  }
}
