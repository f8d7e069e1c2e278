import type { RestCallConfig, RfcCallConfig } from '../../config/call-schema.js';
import type { ErpSystemConfig } from '../../config/erp-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RestRequest } from '../../erp/rest-client.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import type { Logger } from '../../log.js';
import type { RepositoryReader } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { RepositoryWriter } from '../../ports/repository-writer.js';
import type { ClaimedDocument, TaskRecord } from '../records.js';

/** A system's port for each transport. */
export interface ErpPorts {
  RFC: ErpPort<RfcRequest>;
  Rest: ErpPort<RestRequest>;
}

export interface TaskDeps {
  client: RepositoryReader;
  writer: RepositoryWriter;
  /** The ERP port for a system and transport, or undefined when erpHttp.yaml has no such connection. */
  erpFor: <T extends keyof ErpPorts>(system: string, transport: T) => ErpPorts[T] | undefined;
  /** A system of erpHttp.yaml by name; asked only for systems documents were admitted for, which exist. */
  system: (name: string) => ErpSystemConfig;
  log: Logger;
  runId: string;
  /** Fires when the run must stop: nothing more is claimed, calls under way get the grace period. */
  stop: AbortSignal;
  /** Documents claimed by this run and not settled yet, by uid: what a run cut short leaves claimed. */
  inFlight: Map<string, ClaimedDocument>;
  /** The documents this run's intake labelled READY for the task's use case (see labelledPages). */
  labelled: readonly RepositoryDocument[];
  /** The run's shard as a condition on the uuid ('' for every document). */
  shard: string;
  /**
   * Documents this run settled in its previous round (run.ts): a search index that lags may still
   * show them as they were, and a claim of one would only meet the run's own write (409).
   */
  settledBefore: ReadonlySet<string>;
  /** Hears how many documents the task found (its search, then the labelled ones it adds), for progress. */
  found: (count: number) => void;
  now?: () => Date;
}

/** What each step of a task works with. */
export interface TaskContext {
  task: TaskConfig;
  call: RfcCallConfig | RestCallConfig;
  deps: TaskDeps;
  onRecord: (record: TaskRecord) => void;
  now: () => Date;
}

export const base = (ctx: TaskContext, doc: RepositoryDocument): ClaimedDocument => ({
  uid: doc.uid,
  path: doc.path,
  task: ctx.task.name,
});

/** A lookup finds work already done, or SAP ignores a repeat: sending again creates nothing twice. */
export const safeToRepeat = (call: RfcCallConfig | RestCallConfig): boolean =>
  call.repeatable || call.lookup !== undefined;

export const operatorHint = (uid: string): string =>
  `check in SAP, then \`connect2erp retry --doc ${uid}\` to send it again`;
