import pLimit from 'p-limit';
import type { TaskConfig } from '../config/task-schema.js';
import { AuthenticationError, ConflictError, errorMessage, type Connect2ErpError } from '../errors.js';
import type { ErpPort } from '../erp/port.js';
import type { Logger } from '../log.js';
import type { RepositoryClient } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import { drain } from '../repository/pager.js';
import type { RepositoryWriter } from '../repository/writer.js';
import { taskQuery } from './query.js';
import { missingValues } from './readiness.js';
import { barcode } from './use-cases/barcode.js';
import { link } from './use-cases/link.js';
import type { CallOutcome, UseCaseHandler } from './use-cases/types.js';
import { workflow } from './use-cases/workflow.js';

const HANDLERS: Record<TaskConfig['useCase'], UseCaseHandler> = { link, barcode, workflow };

export type TaskResult = 'DONE' | 'RETRY' | 'FAILED' | 'PENDING_INPUT' | 'CLAIMED_ELSEWHERE' | 'PLANNED';

export interface TaskRecord {
  uid: string;
  path: string;
  task: string;
  result: TaskResult;
  reference?: string;
  message?: string;
}

export interface TaskDeps {
  client: RepositoryClient;
  writer: RepositoryWriter;
  /** The ERP port for a system name, or undefined when erpHttp.yaml has no usable connection. */
  erpFor: (system: string) => ErpPort | undefined;
  log: Logger;
  runId: string;
  dryRun: boolean;
  now?: () => Date;
}

const S = (field: string): string => `erpTaskStatus:${field}`;

/**
 * One task over its backlog: re-check readiness, claim (status IN_PROGRESS written with the
 * document's changeToken; a 409 means another run has it), call the ERP per source system,
 * and write DONE, RETRY (with back-off) or FAILED back. Bad ERP credentials stop the task
 * and release its claims instead of failing every document.
 */
export async function runTask(task: TaskConfig, deps: TaskDeps): Promise<TaskRecord[]> {
  const records: TaskRecord[] = [];
  const now = deps.now ?? (() => new Date());
  const limit = pLimit(task.concurrency);
  for await (const page of drain(deps.client, taskQuery(task, now()), task.batchSize)) {
    const claimed = (await Promise.all(page.map((doc) => limit(() => prepare(task, doc, deps, records, now()))))).filter((d) => d !== undefined);
    const groups = bySystem(claimed);
    for (const [i, [system, docs]] of groups.entries()) {
      const outcomes = await HANDLERS[task.useCase](docs, deps.erpFor(system) as ErpPort);
      const refused = outcomes.find((o) => o.error instanceof AuthenticationError);
      if (refused) {
        const unsettled = groups.slice(i).flatMap(([, rest]) => rest);
        await Promise.all(unsettled.map((doc) => limit(() => release(doc, deps))));
        throw refused.error;
      }
      await Promise.all(docs.map((doc, j) => limit(async () => records.push(await settle(task, doc, outcomes[j], deps, now())))));
    }
  }
  return records;
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
async function prepare(task: TaskConfig, doc: RepositoryDocument, deps: TaskDeps, records: TaskRecord[], at: Date): Promise<RepositoryDocument | undefined> {
  const base = { uid: doc.uid, path: doc.path, task: task.name };
  const missing = missingValues(task.useCase, doc.properties);
  const system = String(doc.properties['erpHttpContent:source']);
  if (missing.length === 0 && deps.erpFor(system) === undefined) missing.push(`erpHttpContent:source (no ERP system "${system}" with a ${task.function} connection)`);
  if (missing.length > 0) {
    const message = `waiting for ${missing.join(', ')}`;
    if (doc.properties[S('status')] !== 'PENDING_INPUT' || doc.properties[S('message')] !== message) {
      await deps.writer.update(doc, { [S('status')]: 'PENDING_INPUT', [S('message')]: message });
    }
    records.push({ ...base, result: 'PENDING_INPUT', message });
    return undefined;
  }
  try {
    return await deps.writer.update(doc, {
      [S('status')]: 'IN_PROGRESS', [S('task')]: task.name, [S('claimedBy')]: deps.runId,
      [S('claimExpires')]: new Date(at.getTime() + task.claimTimeoutMs).toISOString(), [S('lastAttempt')]: at.toISOString(),
    });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    records.push({ ...base, result: 'CLAIMED_ELSEWHERE' });
    return undefined;
  }
}

/** Write the outcome; the claim is ours, so no changeToken: a user's edit in between must not lose it. */
async function settle(task: TaskConfig, doc: RepositoryDocument, outcome: CallOutcome, deps: TaskDeps, at: Date): Promise<TaskRecord> {
  const base = { uid: doc.uid, path: doc.path, task: task.name };
  const unclaimed = { ...doc, changeToken: null };
  const free = { [S('claimedBy')]: null, [S('claimExpires')]: null };
  if (outcome.error === undefined) {
    if (deps.dryRun) return { ...base, result: 'PLANNED', reference: outcome.reference };
    await deps.writer.update(unclaimed, { ...free, [S('status')]: 'DONE', [S('message')]: null, [S('erpReference')]: outcome.reference, [S('nextAttempt')]: null });
    deps.log.info('document processed', { ...base, reference: outcome.reference });
    return { ...base, result: 'DONE', reference: outcome.reference };
  }
  const attempts = Number(doc.properties[S('attempts')] ?? 0) + 1;
  const message = errorMessage(outcome.error);
  const retry = (outcome.error as Connect2ErpError).transient && attempts < task.attempts;
  const delay = Math.min(task.backoff.initialMs * task.backoff.factor ** (attempts - 1), task.backoff.maxMs);
  const result = retry ? 'RETRY' : 'FAILED';
  await deps.writer.update(unclaimed, {
    ...free, [S('status')]: result, [S('message')]: message, [S('attempts')]: attempts,
    [S('nextAttempt')]: retry ? new Date(at.getTime() + delay).toISOString() : null,
  });
  deps.log.warn('document not processed', { ...base, result, attempts, error: message });
  return { ...base, result, message };
}

async function release(doc: RepositoryDocument, deps: TaskDeps): Promise<void> {
  await deps.writer.update({ ...doc, changeToken: null }, { [S('status')]: 'READY', [S('claimedBy')]: null, [S('claimExpires')]: null });
}
