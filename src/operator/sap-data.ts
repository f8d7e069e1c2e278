import { ConfigError, errorMessage } from '../../common/errors.js';
import type { ErpSystemConfig } from '../config/erp-schema.js';
import type { TaskConfig } from '../config/task-schema.js';
import { callFor } from '../config/templates.js';
import { afterLink } from '../job/calls/after-link.js';
import { OBJECT_TYPE } from '../job/calls/open-url.js';
import { nxqlList } from '../nxql/literal.js';
import { READ_AT } from '../job/calls/read-back.js';
import type { LaneDeps } from '../job/lanes/context.js';
import { ownSystems, taskReads } from '../job/sources/reads.js';
import type { Logger } from '../log.js';
import type { RepositoryWriter } from '../ports/repository-writer.js';
import { unlessMissing, type RepositoryReader } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import { drain } from '../repository/pager.js';
import { STATUS, statusOf } from '../status/facet.js';
import { doneQuery } from '../status/query.js';

/** What `sap-data` did with one document. */
export interface SapDataRecord {
  uid: string;
  path: string;
  task: string;
  /** Written (or, in a dry run, would be); problems say what could not be had. */
  written: string[];
  problems: string[];
}

interface SapDataDeps {
  client: RepositoryReader;
  writer: RepositoryWriter;
  erpFor: LaneDeps['erpFor'];
  systems: Map<string, ErpSystemConfig>;
  log: Logger;
  now: () => Date;
}

const PAGE = 100;

/**
 * "Open in SAP" and SAP's data for DONE documents, as a link writes them (after-link.ts): for those
 * linked before the task's `read` or the system's `openInSap` was configured, or again (`again`).
 * A document at a time, its own outcome: a read that fails is told, and the next one goes on.
 */
export async function readSapData(
  tasks: TaskConfig[],
  options: { uid?: string; again: boolean },
  deps: SapDataDeps,
  onRecord: (record: SapDataRecord) => void,
): Promise<void> {
  const systems = [...deps.systems.values()];
  const reading = tasks.filter((task) => task.read !== undefined || openedTypes(task, systems).length > 0);
  if (options.uid !== undefined) return one(reading, options.uid, deps, onRecord);
  for (const task of reading) {
    const query = doneQuery(task, options.again ? undefined : notYet(task, systems));
    const reads = taskReads(task, callFor(task).call, systems);
    for await (const page of drain(deps.client, query, PAGE, undefined, reads))
      for (const doc of page) onRecord(await readOne(task, doc, deps));
  }
}

/** The object types the task's systems open in SAP; only a link names one (its read too: task-schema.ts). */
function openedTypes(task: TaskConfig, systems: ErpSystemConfig[]): string[] {
  if (task.useCase !== 'link') return [];
  return [...new Set(ownSystems(task, systems).flatMap((system) => Object.keys(system.openInSap ?? {})))];
}

/** What a document lacks: SAP's data never read, or an address for an object type that has a template. */
function notYet(task: TaskConfig, systems: ErpSystemConfig[]): string {
  const types = openedTypes(task, systems);
  const lacking = [
    ...(task.read === undefined ? [] : [`${READ_AT} IS NULL`]),
    ...(types.length === 0 ? [] : [`(${STATUS.sapUrl} IS NULL AND ${OBJECT_TYPE} IN ${nxqlList(types)})`]),
  ];
  return lacking.join(' OR ');
}

/** `--doc`: a DONE document of one of the tasks. */
async function one(
  tasks: TaskConfig[],
  uid: string,
  deps: SapDataDeps,
  onRecord: (record: SapDataRecord) => void,
): Promise<void> {
  const doc = await unlessMissing(deps.client.getById(uid));
  const refuse = (message: string): never => {
    throw new ConfigError([{ file: 'command line', path: 'doc', message }]);
  };
  if (doc === undefined) return refuse(`no document has the uid ${uid} (the reports list each one's)`);
  const task = tasks.find((t) => t.name === doc.properties[STATUS.task]);
  if (statusOf(doc.properties) !== 'DONE' || task === undefined)
    return refuse(`${doc.path} is not a DONE document of a task that reads SAP's data or opens it in SAP`);
  onRecord(await readOne(task, doc, deps));
}

async function readOne(task: TaskConfig, doc: RepositoryDocument, deps: SapDataDeps): Promise<SapDataRecord> {
  const record = { uid: doc.uid, path: doc.path, task: task.name };
  const system = deps.systems.get(String(doc.properties['erpHttpContent:source']));
  if (system === undefined)
    return { ...record, written: [], problems: [`no ERP system "${String(doc.properties['erpHttpContent:source'])}"`] };
  const erp = { RFC: deps.erpFor(system.name, 'RFC'), Rest: deps.erpFor(system.name, 'Rest') };
  const after = afterLink(task, system, erp, deps.now);
  // Its system opens nothing in SAP and the task reads nothing: nothing to have.
  if (after === undefined) return { ...record, written: [], problems: [] };
  const { properties, problems } = await after(doc);
  if (Object.keys(properties).length === 0) return { ...record, written: [], problems };
  try {
    await deps.writer.update(doc, properties);
  } catch (error) {
    // Changed meanwhile (409) or refused: this document's own outcome, the others go on.
    return { ...record, written: [], problems: [...problems, `not written: ${errorMessage(error)}`] };
  }
  deps.log.debug(deps.writer.dryRun ? 'SAP data would be written' : 'SAP data written', record);
  return { ...record, written: Object.keys(properties), problems };
}
