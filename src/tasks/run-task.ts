import type { TaskConfig } from '../config/task-schema.js';
import { AuthenticationError, ConflictError, errorMessage, NotSentError, UncertainError } from '../errors.js';
import type { ErpPort } from '../erp/port.js';
import type { Logger } from '../log.js';
import type { RepositoryClient } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import { concat, drain, eachPage } from '../repository/pager.js';
import type { RepositoryWriter } from '../repository/writer.js';
import { taskQuery, taskReads } from './query.js';
import { missingValues } from './readiness.js';
import { execute, type CallAdapter, type CallOutcome, type PlannedFor } from './calls/execute.js';
import { restCall } from './calls/rest-call.js';
import { rfcCall } from './calls/rfc-call.js';
import { callFor } from './templates.js';
import { claim, CLAIMED_BY, UNCLAIMED } from './claim.js';
import type { RestCallConfig, RfcCallConfig } from '../config/call-schema.js';
import type { RfcRequest } from '../erp/rfc-client.js';
import type { RestRequest } from '../erp/rest-client.js';

/** RELEASED: claimed, but the run stopped before its call went out; back to READY. */
export type TaskResult = 'DONE' | 'RETRY' | 'FAILED' | 'PENDING_INPUT' | 'CLAIMED_ELSEWHERE' | 'PLANNED' | 'RELEASED';

export interface TaskRecord {
  uid: string;
  path: string;
  task: string;
  result: TaskResult;
  reference?: string;
  message?: string;
  /** Dry run: the ERP call this document would get, and its values for it. */
  planned?: PlannedFor;
}

export interface TaskDeps {
  client: RepositoryClient;
  writer: RepositoryWriter;
  /** The ERP port for a system and transport, or undefined when erpHttp.yaml has no such connection. */
  erpFor: (system: string, transport: TaskConfig['function']) => ErpPort<RfcRequest> | ErpPort<RestRequest> | undefined;
  log: Logger;
  runId: string;
  dryRun: boolean;
  /** Fires when the run must stop: nothing more is claimed, calls not yet sent are released. */
  stop: AbortSignal;
  /** Documents claimed by this run and not settled yet, by uid: what a run cut short leaves claimed. */
  inFlight: Map<string, ClaimedDocument>;
  /** Dry run: the documents this run's own intake would have labelled for the task, after what its search finds. */
  unlabelled?: (task: TaskConfig, reads: string[]) => AsyncIterable<RepositoryDocument[]>;
  now?: () => Date;
}

export type ClaimedDocument = Pick<TaskRecord, 'uid' | 'path' | 'task'>;

const S = (field: string): string => `erpTaskStatus:${field}`;

/**
 * One task over its backlog: re-check readiness, claim (status IN_PROGRESS written with the
 * document's changeToken; a 409 means another run has it), call the ERP per source system,
 * and write DONE, RETRY (with back-off) or FAILED back. `concurrency` pages are worked on at
 * once, so the ERP always has claimed documents waiting. Each document's record goes to
 * `onRecord` once it is settled. Bad ERP credentials, or an untrusted certificate, stop the
 * task and release the claims they refused instead of failing those documents.
 */
export async function runTask(task: TaskConfig, deps: TaskDeps, onRecord: (record: TaskRecord) => void): Promise<void> {
  const call = callFor(task);
  const adapter = (system: string): CallAdapter => {
    const erp = deps.erpFor(system, task.function);
    if (task.function === 'RFC') return rfcCall(call as RfcCallConfig, erp as ErpPort<RfcRequest>);
    return restCall(call as RestCallConfig, erp as ErpPort<RestRequest>, (doc) => deps.client.downloadBlob(doc.uid));
  };
  const now = deps.now ?? (() => new Date());
  const reads = taskReads(task, call);
  const pages = concat(drain(deps.client, taskQuery(task, now()), task.batchSize, deps.stop, reads), deps.unlabelled?.(task, reads) ?? []);
  await eachPage(pages, task.concurrency, async (page) => {
    const claimed = (await Promise.all(page.map((doc) => prepare(task, call, doc, deps, onRecord, now())))).filter((d) => d !== undefined);
    let refused: AuthenticationError | undefined;
    for (const [system, docs] of bySystem(claimed)) {
      const outcomes = execute(adapter(system), docs);
      await Promise.all(docs.map(async (doc, j) => {
        const outcome = await outcomes[j];
        if (outcome.error instanceof AuthenticationError) {
          refused = outcome.error;
          await release(doc, deps);
          onRecord({ uid: doc.uid, path: doc.path, task: task.name, result: 'RELEASED', message: outcome.error.message });
        } else {
          onRecord(await settle(task, call, doc, outcome, deps, now()));
        }
        deps.inFlight.delete(doc.uid);
      }));
    }
    // Refused credentials stop the task once its claimed documents are settled or released.
    if (refused) throw refused;
  });
}

function bySystem(docs: RepositoryDocument[]): Array<[string, RepositoryDocument[]]> {
  const groups = new Map<string, RepositoryDocument[]>();
  for (const doc of docs) {
    const system = String(doc.properties['erpHttpContent:source']);
    const group = groups.get(system);
    if (group) group.push(doc);
    else groups.set(system, [doc]);
  }
  return [...groups];
}

/** Readiness, then the claim; returns the claimed document, or records why not. */
async function prepare(task: TaskConfig, call: RfcCallConfig | RestCallConfig, doc: RepositoryDocument, deps: TaskDeps, onRecord: (record: TaskRecord) => void, at: Date): Promise<RepositoryDocument | undefined> {
  const base = { uid: doc.uid, path: doc.path, task: task.name };
  const missing = missingValues(task.useCase, doc.properties);
  const system = String(doc.properties['erpHttpContent:source']);
  if (missing.length === 0 && deps.erpFor(system, task.function) === undefined) missing.push(`erpHttpContent:source (no ERP system "${system}" with a ${task.function} connection)`);
  if (missing.length > 0) {
    const message = `waiting for ${missing.join(', ')}`;
    if (doc.properties[S('status')] !== 'PENDING_INPUT' || doc.properties[S('message')] !== message) {
      await deps.writer.update(doc, { [S('status')]: 'PENDING_INPUT', [S('message')]: message });
    }
    onRecord({ ...base, result: 'PENDING_INPUT', message });
    return undefined;
  }
  try {
    if (doc.properties[S('status')] === 'IN_PROGRESS' && !safeToRepeat(call)) return await abandon(task, doc, deps, onRecord);
    const claimed = await deps.writer.update(doc, {
      [S('status')]: 'IN_PROGRESS', [S('task')]: task.name, ...claim(deps.runId, at, task.claimTimeoutMs), [S('lastAttempt')]: at.toISOString(),
    });
    deps.inFlight.set(doc.uid, base);
    // The claim wrote status fields only; the call works on the values as they were read.
    return { ...doc, changeToken: claimed.changeToken };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    onRecord({ ...base, result: 'CLAIMED_ELSEWHERE' });
    return undefined;
  }
}

/** A lookup finds work already done, or SAP ignores a repeat: sending again creates nothing twice. */
const safeToRepeat = (call: RfcCallConfig | RestCallConfig): boolean => call.repeatable || call.lookup !== undefined;

const operatorHint = (uid: string): string => `check in SAP, then \`connect2erp retry --doc ${uid}\` to send it again`;

/**
 * An expired claim on a call that can neither be looked up nor safely repeated (a workflow
 * start): the interrupted run may have reached SAP, so an operator decides instead of a retry.
 */
async function abandon(task: TaskConfig, doc: RepositoryDocument, deps: TaskDeps, onRecord: (record: TaskRecord) => void): Promise<undefined> {
  const message = `run ${String(doc.properties[CLAIMED_BY])} was interrupted while sending this document and SAP may have it already: ${operatorHint(doc.uid)}`;
  await deps.writer.update(doc, { ...UNCLAIMED, [S('status')]: 'FAILED', [S('message')]: message });
  deps.log.warn('document left for an operator', { uid: doc.uid, path: doc.path, task: task.name });
  onRecord({ uid: doc.uid, path: doc.path, task: task.name, result: 'FAILED', message });
  return undefined;
}

/** Write the outcome; the claim is ours, so no changeToken: a user's edit in between must not lose it. */
async function settle(task: TaskConfig, call: RfcCallConfig | RestCallConfig, doc: RepositoryDocument, outcome: CallOutcome, deps: TaskDeps, at: Date): Promise<TaskRecord> {
  const base = { uid: doc.uid, path: doc.path, task: task.name };
  const unclaimed = { ...doc, changeToken: null };
  if (outcome.error instanceof NotSentError) {
    await release(doc, deps);
    return { ...base, result: 'RELEASED', message: outcome.error.message };
  }
  if (outcome.error === undefined) {
    if (outcome.planned) return { ...base, result: 'PLANNED', reference: outcome.reference, planned: outcome.planned };
    if (deps.dryRun) return { ...base, result: 'PLANNED', reference: outcome.reference, message: 'already in SAP: would be marked DONE' };
    await deps.writer.update(unclaimed, { ...UNCLAIMED, [S('status')]: 'DONE', [S('message')]: outcome.message ?? null, [S('erpReference')]: outcome.reference, [S('nextAttempt')]: null });
    deps.log.info('document processed', { ...base, reference: outcome.reference });
    return { ...base, result: 'DONE', reference: outcome.reference };
  }
  const attempts = Number(doc.properties[S('attempts')] ?? 0) + 1;
  const uncertain = outcome.error instanceof UncertainError && !safeToRepeat(call);
  const message = uncertain ? `${errorMessage(outcome.error)}; SAP may have received it, so it is not sent again by itself: ${operatorHint(doc.uid)}` : errorMessage(outcome.error);
  const retry = outcome.error.transient && !uncertain && attempts < task.attempts;
  const delay = Math.min(task.backoff.initialMs * task.backoff.factor ** (attempts - 1), task.backoff.maxMs);
  const result = retry ? 'RETRY' : 'FAILED';
  await deps.writer.update(unclaimed, {
    ...UNCLAIMED, [S('status')]: result, [S('message')]: message, [S('attempts')]: attempts,
    [S('nextAttempt')]: retry ? new Date(at.getTime() + delay).toISOString() : null,
  });
  deps.log.warn('document not processed', { ...base, result, attempts, error: message });
  return { ...base, result, message };
}

async function release(doc: RepositoryDocument, deps: TaskDeps): Promise<void> {
  await deps.writer.update({ ...doc, changeToken: null }, { ...UNCLAIMED, [S('status')]: 'READY' });
}
