import { ConflictError, errorMessage, type Connect2ErpError } from '../errors.js';
import { PropertiesDroppedError, type RepositoryClient } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import type { RepositoryWriter } from '../repository/writer.js';
import { nxqlString } from '../nxql/literal.js';
import type { Logger } from '../log.js';
import { STATUS_FACET, type DocumentPlan } from './plan.js';
import { claim, CLAIM_EXPIRES, CLAIMED_BY } from '../tasks/claim.js';

export interface IntakeOutcome {
  plan: DocumentPlan;
  /** Path of the archive-link folder, when one is used. */
  folderPath?: string;
  error?: string;
  transient?: boolean;
  /** Left to another run (or user) that changed the document first; the next run looks again if it is still unlabelled. */
  skipped?: string;
}

export interface IntakeDeps {
  /** For reads only; every write goes through the writer. */
  client: RepositoryClient;
  writer: RepositoryWriter;
  log: Logger;
  runId: string;
  /** How long an intake claim holds (storage.yaml `intakeClaimTimeoutMs`). */
  claimTimeoutMs: number;
}
const CHANGED_FIRST = 'changed by another run or a user while being labelled; the next run looks at it again if it is still unlabelled';

/**
 * Label one page of documents of one mapping entry. Each step is idempotent; the
 * document's own properties are written last, so a run killed anywhere is finished by
 * the next one. Facets are added in one call per facet for all documents of the page.
 */
export async function applyPlans(plans: DocumentPlan[], deps: IntakeDeps): Promise<IntakeOutcome[]> {
  const outcomes = new Map<string, IntakeOutcome>();
  const ready: DocumentPlan[] = [];
  for (const plan of plans) {
    if (plan.unresolved.length > 0) outcomes.set(plan.doc.uid, { plan, error: `no value for ${plan.unresolved.join(', ')}` });
    else ready.push(plan);
  }
  const withFolder = ready.filter((p) => p.folder !== undefined);
  const flat = ready.filter((p) => p.folder === undefined);
  await Promise.all(withFolder.map(async (plan) => outcomes.set(plan.doc.uid, await labelWithFolder(plan, deps))));
  const labelled = await addFacets(flat, deps, outcomes);
  await Promise.all(labelled.map(async (plan) => outcomes.set(plan.doc.uid, await writeValues(plan, plan.doc, deps))));
  return plans.map((p) => outcomes.get(p.doc.uid) as IntakeOutcome);
}

function failure(plan: DocumentPlan, error: unknown): IntakeOutcome {
  const transient = (error as Partial<Connect2ErpError>).transient === true;
  return { plan, error: errorMessage(error), transient };
}

/** One AddFacet call per facet for all documents; if a call fails, documents are tried one by one to find the culprit. */
async function addFacets(plans: DocumentPlan[], deps: IntakeDeps, outcomes: Map<string, IntakeOutcome>): Promise<DocumentPlan[]> {
  if (plans.length === 0) return [];
  try {
    for (const facet of plans[0].facets) await deps.writer.addFacet(plans.map((p) => p.doc.uid), facet);
    return plans;
  } catch (error) {
    if (plans.length === 1) {
      outcomes.set(plans[0].doc.uid, failure(plans[0], error));
      return [];
    }
    const results = await Promise.all(plans.map((plan) => addFacets([plan], deps, outcomes)));
    return results.flat();
  }
}

/** Write the values and the initial status; a property that did not stick is undone so the next run retries. */
async function writeValues(plan: DocumentPlan, doc: RepositoryDocument, deps: IntakeDeps, folderPath?: string): Promise<IntakeOutcome> {
  try {
    await deps.writer.update(doc, { ...plan.values, ...plan.status });
    return { plan, folderPath };
  } catch (error) {
    if (error instanceof ConflictError) return { plan, folderPath, skipped: CHANGED_FIRST };
    if (error instanceof PropertiesDroppedError) await undo(plan, error, deps);
    return { ...failure(plan, error), folderPath };
  }
}

async function undo(plan: DocumentPlan, error: PropertiesDroppedError, deps: IntakeDeps): Promise<void> {
  const properties = { 'erpHttpContent:docId': null, 'erpTaskStatus:status': 'FAILED', 'erpTaskStatus:message': error.message };
  await deps.writer.update({ ...plan.doc, changeToken: null }, properties).catch((undoError: unknown) => {
    deps.log.error('could not mark a half-labelled document', { uid: plan.doc.uid, error: errorMessage(undoError) });
  });
}

/** Another run holds an unexpired intake claim on the document. */
function claimedElsewhere(plan: DocumentPlan, deps: IntakeDeps, at: Date): string | undefined {
  const owner = plan.doc.properties[CLAIMED_BY];
  const expires = plan.doc.properties[CLAIM_EXPIRES];
  if (typeof owner !== 'string' || owner === deps.runId || typeof expires !== 'string' || new Date(expires) <= at) return undefined;
  return `being labelled by run ${owner} (claim until ${expires})`;
}

/**
 * Two runs must not both create a folder for one file, so the file is claimed first: its
 * claim is written with the changeToken the run read it with, and a 409 means another run
 * got there first. A run that dies holding the claim is taken over once it expires.
 */
async function claimForFolder(plan: DocumentPlan, deps: IntakeDeps): Promise<RepositoryDocument | string> {
  const at = new Date();
  const elsewhere = claimedElsewhere(plan, deps, at);
  if (elsewhere !== undefined) return elsewhere;
  await deps.writer.addFacet([plan.doc.uid], STATUS_FACET);
  try {
    return await deps.writer.update(plan.doc, claim(deps.runId, at, deps.claimTimeoutMs));
  } catch (error) {
    if (error instanceof ConflictError) return CHANGED_FIRST;
    throw error;
  }
}

/**
 * The folder is found again by `dc:source` = the file's UUID, so a run that died after
 * creating it never creates a second one.
 */
async function labelWithFolder(plan: DocumentPlan, deps: IntakeDeps): Promise<IntakeOutcome> {
  const folderSpec = plan.folder as { name: string; title: string };
  let folderPath: string | undefined;
  try {
    const claimed = await claimForFolder(plan, deps);
    if (typeof claimed === 'string') return { plan, skipped: claimed };
    const existing = await deps.client.search(
      `SELECT * FROM Folder WHERE dc:source = ${nxqlString(plan.doc.uid)} AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0`,
      { pageSize: 2 },
    );
    const parentPath = plan.doc.path.slice(0, plan.doc.path.lastIndexOf('/'));
    const folder = existing.entries[0]
      ?? await deps.writer.createFolder({ uid: plan.doc.parentRef as string, path: parentPath }, folderSpec.name, { 'dc:title': folderSpec.title, 'dc:source': plan.doc.uid });
    folderPath = folder.path;
    for (const facet of plan.entry.facets) await deps.writer.addFacet([folder.uid], facet);
    await deps.writer.update(folder, plan.values);
    const doc = plan.doc.parentRef === folder.uid ? claimed : await deps.writer.move(claimed, folder);
    // The status facet came with the claim.
    for (const facet of plan.facets.filter((f) => f !== STATUS_FACET)) await deps.writer.addFacet([doc.uid], facet);
    return await writeValues(plan, doc, deps, folderPath);
  } catch (error) {
    return { ...failure(plan, error), folderPath };
  }
}
