import PQueue from 'p-queue';
import { errorMessage, type Connect2ErpError } from '../../../common/errors.js';
import type { ErpSystemConfig } from '../../config/erp-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { callFor, type TaskCall } from '../../config/templates.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import { callAdapter } from '../../job/calls/adapter.js';
import type { CallAdapter } from '../../job/calls/execute.js';
import { mapValues, type DateFormat } from '../../job/calls/values.js';
import type { ErpPorts } from '../../job/lanes/context.js';
import type { Logger } from '../../log.js';
import { nxqlList, nxqlString } from '../../nxql/literal.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RepositoryWriter } from '../../ports/repository-writer.js';
import type { RepositoryReader } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { drain } from '../../repository/pager.js';
import { STATUS, STATUS_FACET, statusOf } from '../../status/facet.js';
import { SAP_BUSINESS_OBJECTS, SAP_DOCUMENT_FACET } from '../../status/http-content.js';
import { doneBetween } from '../../status/query.js';
import { putBack } from '../../status/transitions.js';
import { sapListings, type DayRange, type SapRow } from './sap-side.js';

/**
 * `connect2erp reconcile`: the repository's DONE documents against what SAP holds, both ways, so
 * that a DONE that is not in SAP (a link deleted there, a write SAP did not commit) is found by
 * the connector rather than by a user. Each DONE document whose last attempt falls in the range is
 * looked up as the task looks up a lost answer (its call's `lookup`); SAP's rows of each content
 * repository those documents name are listed where a read lists them (sap-side.ts) and matched to
 * the repository's documents by their ArchiveLink id. Read-only, unless `requeue` puts the absent
 * ones back to READY for the next run.
 */

type FindingKind = 'absent' | 'not done' | 'twice' | 'not checked';

export interface Finding {
  kind: FindingKind;
  task: string;
  system: string;
  /** The ArchiveLink document id (erpHttpContent:docId). */
  docId: string;
  uid?: string;
  path?: string;
  detail: string;
  /** Put back to READY (`--requeue`). */
  requeued?: boolean;
}

interface TaskReconciliation {
  task: string;
  /** DONE documents looked up in SAP. */
  looked: number;
  /** SAP's rows listed for the task's content repositories. */
  sapRows: number;
  /** Rows of documents the job did not label (SAP's own, or stored through the content server). */
  foreign: number;
  /** Documents SAP stored through the content server whose business objects were written on them (or, in a dry run, would be). */
  sapStored: number;
  /** What could not be compared, and why (no read in SAP, a system not answering). */
  notChecked: string[];
  /** A read that should have answered did not (a system down, a refusal, a listing failed): exit 4. */
  incomplete: boolean;
}

export interface Reconciliation {
  range: DayRange;
  /** `--requeue` with `--dry-run`: what would be put back was not. */
  dryRun: boolean;
  tasks: TaskReconciliation[];
  findings: Finding[];
  /** Findings beyond LISTED_MAX, counted by kind, not listed. */
  unlisted: number;
}

interface ReconcileDeps {
  client: RepositoryReader;
  writer: RepositoryWriter;
  erpFor: <T extends keyof ErpPorts>(system: string, transport: T) => ErpPorts[T] | undefined;
  systems: Map<string, ErpSystemConfig>;
  log: Logger;
  /** Findings listed in full (LISTED_MAX); past it they are counted. */
  listedMax?: number;
}

/** Findings listed in full; past it they are counted (a commit SAP never made would make one per document). */
const LISTED_MAX = 1000;
const PAGE = 100;
const DOC_ID = 'erpHttpContent:docId';
const SOURCE = 'erpHttpContent:source';
const REPOSITORY = 'erpHttpContent:archiveId';
/** A lookup not asked: its system failed first. */
const DOWN = Symbol('system down');

class Findings {
  readonly listed: Finding[] = [];
  unlisted = 0;

  constructor(private readonly max: number) {}

  add(finding: Finding): void {
    if (this.listed.length < this.max) this.listed.push(finding);
    else this.unlisted++;
  }
}

/** One task's side of the reconciliation: its call's adapter per system, and which systems stopped answering. */
class TaskSide {
  readonly summary: TaskReconciliation;
  readonly call: TaskCall;
  /** Content repositories per system, as the DONE documents name them. */
  readonly repositories = new Map<string, Set<string>>();
  private readonly adapters = new Map<string, CallAdapter>();
  private readonly limits = new Map<string, PQueue>();
  private readonly down = new Set<string>();

  constructor(
    readonly task: TaskConfig,
    private readonly deps: ReconcileDeps,
  ) {
    this.call = callFor(task);
    this.summary = {
      task: task.name,
      looked: 0,
      sapRows: 0,
      foreign: 0,
      sapStored: 0,
      notChecked: [],
      incomplete: false,
    };
  }

  adapter(system: string): CallAdapter | undefined {
    const config = this.deps.systems.get(system);
    if (config === undefined || this.deps.erpFor(system, this.task.function) === undefined) return undefined;
    let adapter = this.adapters.get(system);
    if (adapter === undefined) {
      adapter = callAdapter(this.call, config, this.deps.erpFor, this.deps.client);
      this.adapters.set(system, adapter);
      this.limits.set(system, new PQueue({ concurrency: config.maxConcurrentCalls }));
    }
    return adapter;
  }

  /** At most the system's `maxConcurrentCalls` at once, as the job: what was agreed with the SAP team. */
  limited<T>(system: string, work: () => Promise<T>): Promise<T> {
    return (this.limits.get(system) as PQueue).add(work);
  }

  isDown(system: string): boolean {
    return this.down.has(system);
  }

  /** A system's failure, or a refusal of the task's function module (S_RFC), stops its checks for this task, once said. */
  systemFailed(system: string, error: unknown): void {
    if (this.down.has(system)) return;
    this.down.add(system);
    this.incomplete(`ERP system ${system}: ${errorMessage(error)}`);
  }

  /** A read that should have answered did not: the comparison is incomplete (exit 4). */
  incomplete(reason: string): void {
    this.summary.notChecked.push(reason);
    this.summary.incomplete = true;
  }

  /** A DONE document's content repository (readiness requires one, so every DONE document has it). */
  noted(system: string, repository: string): void {
    const known = this.repositories.get(system) ?? new Set<string>();
    this.repositories.set(system, known.add(repository));
  }
}

/** Reconciles each task in turn; a system that fails stops its own checks only. */
export async function reconcile(
  tasks: TaskConfig[],
  range: DayRange,
  requeue: boolean,
  deps: ReconcileDeps,
): Promise<Reconciliation> {
  const findings = new Findings(deps.listedMax ?? LISTED_MAX);
  const summaries: TaskReconciliation[] = [];
  for (const task of tasks) {
    const side = new TaskSide(task, deps);
    await lookUpDone(side, range, requeue, deps, findings);
    await listSap(side, range, deps, findings);
    summaries.push(side.summary);
  }
  return {
    range,
    dryRun: deps.writer.dryRun,
    tasks: summaries,
    findings: findings.listed,
    unlisted: findings.unlisted,
  };
}

/** Each DONE document of the range looked up as a lost answer is: not found is `absent`. */
async function lookUpDone(
  side: TaskSide,
  range: DayRange,
  requeue: boolean,
  deps: ReconcileDeps,
  findings: Findings,
): Promise<void> {
  const { task } = side;
  if (side.call.call.lookup === undefined) {
    side.summary.notChecked.push(
      "its DONE documents: the call has no lookup (no read of SAP's finds its work by document); check by hand where the task's manualCheck says",
    );
    return;
  }
  for await (const page of drain(deps.client, doneBetween(task, range.from, range.until), PAGE)) {
    await Promise.all(
      page.map(async (doc) => {
        const finding = await lookUp(side, doc);
        if (finding === undefined) return;
        if (finding.kind === 'absent' && requeue) await putBackAbsent(doc, finding, deps);
        findings.add(finding);
      }),
    );
  }
}

async function lookUp(side: TaskSide, doc: RepositoryDocument): Promise<Finding | undefined> {
  const system = String(doc.properties[SOURCE]);
  const base = { task: side.task.name, system, docId: String(doc.properties[DOC_ID]), uid: doc.uid, path: doc.path };
  const adapter = side.adapter(system);
  if (adapter === undefined)
    return {
      ...base,
      kind: 'not checked',
      detail: `no ERP system "${system}" with a ${side.task.function} connection`,
    };
  side.noted(system, String(doc.properties[REPOSITORY]));
  const lookup = adapter.lookup as NonNullable<CallAdapter['lookup']>;
  try {
    const values = mapValues(side.call.call.parameters, doc, adapter.dateFormat, adapter.urls);
    // Asked once a slot is free: by then the system may have failed for another document, which
    // is known before the next slot is given.
    const found = await side.limited(system, async () => {
      if (side.isDown(system)) return DOWN;
      try {
        return await lookup(values);
      } catch (error) {
        const { scope } = error as Connect2ErpError;
        if (scope !== 'system' && scope !== 'lane') throw error;
        side.systemFailed(system, error);
        return DOWN;
      }
    });
    if (found === DOWN) return undefined;
    side.summary.looked++;
    if (found !== undefined) return undefined;
    const reference = String(doc.properties[STATUS.erpReference]);
    return {
      ...base,
      kind: 'absent',
      detail: `DONE (${reference}), but ${adapter.name}'s lookup finds nothing in SAP`,
    };
  } catch (error) {
    return { ...base, kind: 'not checked', detail: errorMessage(error) };
  }
}

/** Back to READY with a fresh count of attempts, written with the document's changeToken. */
async function putBackAbsent(doc: RepositoryDocument, finding: Finding, deps: ReconcileDeps): Promise<void> {
  try {
    await deps.writer.update(doc, {
      ...putBack(),
      [STATUS.message]: `reconcile ${new Date().toISOString().slice(0, 10)}: DONE but not found in SAP; sent again`,
    });
    finding.requeued = true;
  } catch (error) {
    // Changed meanwhile (409), or refused: the document's own outcome, the others go on.
    finding.detail += `; not put back: ${errorMessage(error)}`;
  }
}

/** SAP's rows in each content repository the task's DONE documents name, matched to the repository's documents. */
async function listSap(side: TaskSide, range: DayRange, deps: ReconcileDeps, findings: Findings): Promise<void> {
  const listings = sapListings(side.task.useCase, side.call);
  if (listings.length === 0) {
    side.summary.notChecked.push("SAP's side: no read lists this call's work; only DONE documents were looked up");
    return;
  }
  for (const [system, repositories] of side.repositories) {
    if (side.isDown(system)) continue;
    const erp = deps.erpFor(system, 'RFC') as ErpPort<RfcRequest>;
    // A listed system has an RFC connection: its DONE documents were looked up through it.
    const { dateFormat } = (deps.systems.get(system) as ErpSystemConfig).rfc as { dateFormat: DateFormat };
    for (const repository of repositories) {
      for (const listing of listings) {
        try {
          for await (const rows of listing(erp, repository, range, dateFormat)) {
            side.summary.sapRows += rows.length;
            await matchRows(side, { system, repository }, rows, deps, findings);
          }
        } catch (error) {
          const { scope } = error as Connect2ErpError;
          if (scope === 'system' || scope === 'lane') side.systemFailed(system, error);
          else side.incomplete(`SAP's rows in content repository ${repository} of ${system}: ${errorMessage(error)}`);
        }
      }
    }
  }
}

/** Rows of one document more than once are `twice`; rows of a job's document that is not DONE are `not done`. */
async function matchRows(
  side: TaskSide,
  where: { system: string; repository: string },
  rows: SapRow[],
  deps: ReconcileDeps,
  findings: Findings,
): Promise<void> {
  const { system } = where;
  const byDocument = new Map<string, string[]>();
  const objects = new Map<string, string[]>();
  for (const row of rows) {
    const what = byDocument.get(row.docId) ?? [];
    byDocument.set(row.docId, what);
    what.push(row.what);
    if (row.object !== undefined) objects.set(row.docId, [...(objects.get(row.docId) ?? []), row.object]);
  }
  const base = { task: side.task.name, system };
  for (const [docId, what] of byDocument)
    if (what.length > 1)
      findings.add({ ...base, kind: 'twice', docId, detail: `${what.length} rows in SAP: ${what.join('; ')}` });
  const ids = [...byDocument.keys()];
  for (let i = 0; i < ids.length; i += PAGE) {
    const batch = ids.slice(i, i + PAGE);
    const known = new Set<string>();
    for await (const page of drain(deps.client, ofDocIds(batch), PAGE))
      for (const doc of page) {
        known.add(String(doc.properties[DOC_ID]));
        const finding = notDone(doc);
        if (finding !== undefined)
          findings.add({
            ...base,
            ...finding,
            detail: `${finding.detail}: ${(byDocument.get(finding.docId) as string[]).join('; ')}`,
          });
      }
    const foreign = batch.filter((id) => !known.has(id));
    side.summary.foreign += foreign.length;
    await noteSapLinks(side, where.repository, foreign, objects, deps);
  }
}

/**
 * Documents SAP stored through the content server and linked on its side (ARCHIV_CONNECTION_INSERT
 * in SAP, which the connector never sees): the business objects SAP's link table names are added
 * to those written on them before, so that the ERP tab and searches show what they belong to (a
 * link SAP deletes later stays listed). One changed meanwhile is left for the next reconciliation.
 */
async function noteSapLinks(
  side: TaskSide,
  repository: string,
  ids: string[],
  objects: Map<string, string[]>,
  deps: ReconcileDeps,
): Promise<void> {
  const linked = ids.filter((id) => objects.has(id));
  if (linked.length === 0) return;
  for await (const page of drain(deps.client, storedBySap(repository, linked), PAGE))
    for (const doc of page) {
      // SAP's links are listed a day at a time: those of other days, written before, stay.
      const known = String(doc.properties[SAP_BUSINESS_OBJECTS] ?? '')
        .split('; ')
        .filter((object) => object !== '');
      const merged = [...new Set([...known, ...(objects.get(String(doc.properties[DOC_ID])) as string[])])];
      if (merged.length === known.length) continue;
      try {
        await deps.writer.update(doc, { [SAP_BUSINESS_OBJECTS]: merged.join('; ') });
        side.summary.sapStored++;
      } catch (error) {
        // Changed meanwhile (409) or refused: left for the next reconciliation, which reads SAP again.
        deps.log.warn('business objects not written', { uid: doc.uid, path: doc.path, error: errorMessage(error) });
      }
    }
}

/** The documents SAP stored in a content repository with these ArchiveLink ids. */
const storedBySap = (repository: string, ids: string[]): string =>
  `SELECT * FROM Document WHERE ecm:mixinType = ${nxqlString(SAP_DOCUMENT_FACET)} AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ${REPOSITORY} = ${nxqlString(repository)} AND ${DOC_ID} IN ${nxqlList(ids)}`;

/** The job's documents (status facet) with these ArchiveLink ids; archive-link folders share the id, without the facet. */
const ofDocIds = (ids: string[]): string =>
  `SELECT * FROM Document WHERE ecm:mixinType = ${nxqlString(STATUS_FACET)} AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ${DOC_ID} IN ${nxqlList(ids)}`;

/**
 * A document SAP has that is not DONE. A search is matched on an index that lags writes, but its
 * hits are read again from the repository (Nuxeo's VcsFetcher; sandbox/repository/search-index.ts):
 * the status a hit carries is current.
 */
function notDone(doc: RepositoryDocument): Omit<Finding, 'task' | 'system'> | undefined {
  const status = statusOf(doc.properties);
  if (status === 'DONE') return undefined;
  return {
    kind: 'not done',
    docId: String(doc.properties[DOC_ID]),
    uid: doc.uid,
    path: doc.path,
    detail: `in SAP, but ${String(status)} in the repository`,
  };
}
