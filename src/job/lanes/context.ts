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
import type { ClaimedDocument } from '../records.js';
import type { RunRecords } from '../run-records.js';
import { fill, mapValues } from '../calls/values.js';
import type { Claims } from '../claims/claims.js';
import type { SendBudget } from './send-budget.js';

/** A system's port for each transport. */
export interface ErpPorts {
  RFC: ErpPort<RfcRequest>;
  Rest: ErpPort<RestRequest>;
}

/** What every lane of a run shares. */
export interface LaneDeps {
  client: RepositoryReader;
  writer: RepositoryWriter;
  /** The ERP port for a system and transport, or undefined when erpHttp.yaml has no such connection. */
  erpFor: <T extends keyof ErpPorts>(system: string, transport: T) => ErpPorts[T] | undefined;
  /** A system of erpHttp.yaml by name; asked only for systems documents were admitted for, which exist. */
  system: (name: string) => ErpSystemConfig;
  /** Every system of erpHttp.yaml, by name. */
  systemNames: string[];
  log: Logger;
  /** Fires when the run must stop: nothing more is claimed, calls under way get the grace period. */
  stop: AbortSignal;
  /** Every claim the run writes, renews, settles or gives back goes through these. */
  claims: Claims;
  /** Which documents the run takes, as a condition on the uuid: its shard, its one document ('' for every document). */
  scope: string;
  /** How many documents the run may still hand to SAP (`--limit`). */
  budget: SendBudget;
  /** The clock claims, back-offs and the breakers' probes are read from (a test moves it on). */
  now: () => Date;
}

/** What each step of a task's work on a document works with. */
export interface TaskContext {
  task: TaskConfig;
  call: RfcCallConfig | RestCallConfig;
  deps: LaneDeps;
  /** Where each record of the task's documents goes (the run's tally, observer, batch log). */
  records: RunRecords;
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

/**
 * What an operator does with a document SAP may have: where to look (the call's `manualCheck`,
 * filled with the document's values), then `retry` to send it again.
 */
export function operatorHint(ctx: TaskContext, doc: RepositoryDocument): string {
  let where = 'check in SAP';
  if (ctx.call.manualCheck !== undefined) {
    try {
      where = `check in ${fill(ctx.call.manualCheck, mapValues(ctx.call.parameters, doc))}`;
    } catch {
      // A value that does not map never went to SAP either: the general advice stands.
    }
  }
  return `${where}, then \`connect2erp retry --doc ${doc.uid}\` to send it again`;
}
