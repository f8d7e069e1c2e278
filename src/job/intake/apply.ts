import { errorMessage, NotServedError, type Connect2ErpError } from '../../../common/errors.js';
import { PropertiesDroppedError, type RepositoryReader } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { RepositoryWriter } from '../../ports/repository-writer.js';
import { nxqlString } from '../../nxql/literal.js';
import type { Logger } from '../../log.js';
import type { DocumentPlan } from './plan.js';
import type { FolderChain } from './folder-chain.js';
import { STATUS_FACET } from '../../status/facet.js';
import { HTTP_CONTENT_FACET } from '../../status/http-content.js';
import { CHANGED_FIRST, type Claims } from '../claims/claims.js';
import type { ClaimTerms } from '../claims/claim.js';

export interface IntakeOutcome {
  plan: DocumentPlan;
  /** The document as labelled (its facets, values, status and changeToken), for this run's tasks. */
  labelled?: RepositoryDocument;
  /** Path of the archive-link folder, when one is used. */
  folderPath?: string;
  error?: string;
  transient?: boolean;
  /** Left to another run (or user) that changed the document first; the next run looks again if it is still unlabelled. */
  skipped?: string;
}

export interface IntakeDeps {
  client: RepositoryReader;
  writer: RepositoryWriter;
  log: Logger;
  /** The intake's claims (a file's, before its folder is made) and those written with labels. */
  claims: Claims;
  /** How long an intake claim holds (storage.yaml `intakeClaimTimeoutMs`). */
  claimTimeoutMs: number;
  /** Hears how many documents each search found, for progress. */
  found: (count: number) => void;
  /** The task to claim a document for with its labels, if any: one write for both. */
  claimAtLabel?: (plan: DocumentPlan) => ClaimTerms | undefined;
  /** Whether a new folder is made in one request, the repository package's chain (folder-chain.ts). */
  folderChain: FolderChain;
}

/**
 * Label one page of documents of one mapping entry. Each step is idempotent; the
 * document's own properties are written last, so a run killed anywhere is finished by
 * the next one. Facets are added in one call per facet for the whole page: first the
 * files', then (with archive-link folders) the folders'.
 */
export async function applyPlans(plans: DocumentPlan[], deps: IntakeDeps): Promise<IntakeOutcome[]> {
  const outcomes = new Map<string, IntakeOutcome>();
  const record = (outcome: IntakeOutcome): void => void outcomes.set(outcome.plan.doc.uid, outcome);
  const ready: DocumentPlan[] = [];
  for (const plan of plans) {
    if (plan.unresolved.length > 0) record({ plan, error: `no value for ${plan.unresolved.join(', ')}` });
    else if (plan.unfit.length > 0) record({ plan, error: plan.unfit.join('; ') });
    else ready.push(plan);
  }
  // A file with its facets but without docId is found again by the next run's intake query.
  const labelled = await addFacets(
    ready,
    ready[0]?.facets ?? [],
    (plan) => plan.doc.uid,
    deps,
    (plan, error) => record(failure(plan, error)),
  );
  const withFolder = labelled.filter((p) => p.folder !== undefined);
  const flat = labelled.filter((p) => p.folder === undefined);
  await Promise.all([
    labelWithFolders(withFolder, deps).then((done) => done.forEach(record)),
    ...flat.map(async (plan) => record(await writeValues(plan, plan.doc, deps))),
  ]);
  return plans.map((p) => outcomes.get(p.doc.uid) as IntakeOutcome);
}

function failure(plan: DocumentPlan, error: unknown): IntakeOutcome {
  const transient = (error as Partial<Connect2ErpError>).transient === true;
  return { plan, error: errorMessage(error), transient };
}

/**
 * One AddFacet call per facet for all items; if a call fails, the items are tried one by one
 * to find the culprit, which goes to `failed`. Answers the items that have every facet.
 */
async function addFacets<T>(
  items: T[],
  facets: readonly string[],
  uid: (item: T) => string,
  deps: IntakeDeps,
  failed: (item: T, error: unknown) => void,
): Promise<T[]> {
  if (items.length === 0) return [];
  try {
    for (const facet of facets) await deps.writer.addFacet(items.map(uid), facet);
    return items;
  } catch (error) {
    if (items.length === 1) {
      failed(items[0], error);
      return [];
    }
    const results = await Promise.all(items.map((item) => addFacets([item], facets, uid, deps, failed)));
    return results.flat();
  }
}

/**
 * Write the values and the initial status, with, for a document ready as it is labelled, its task's
 * claim (sources/claim-at-label.ts; claims/claims.ts `label` reads the document again after a 409);
 * a property that did not stick is undone so the next run retries.
 */
async function writeValues(
  plan: DocumentPlan,
  doc: RepositoryDocument,
  deps: IntakeDeps,
  folderPath?: string,
): Promise<IntakeOutcome> {
  const facets = [...new Set([...doc.facets, ...plan.facets])];
  try {
    const labelled = await deps.claims.label(
      { ...doc, facets },
      { ...plan.values, ...plan.status },
      deps.claimAtLabel?.(plan),
    );
    if (labelled === undefined) return { plan, folderPath, skipped: CHANGED_FIRST };
    return { plan, folderPath, labelled };
  } catch (error) {
    if (error instanceof PropertiesDroppedError) await undo(plan, error, deps);
    return { ...failure(plan, error), folderPath };
  }
}

async function undo(plan: DocumentPlan, error: PropertiesDroppedError, deps: IntakeDeps): Promise<void> {
  const unlabelled = { 'erpHttpContent:docId': null };
  await deps.claims.fail({ ...plan.doc, changeToken: null }, error.message, unlabelled).catch((undoError: unknown) => {
    deps.log.error('could not mark a half-labelled document', { uid: plan.doc.uid, error: errorMessage(undoError) });
  });
}

/** A claimed file and its archive-link folder, found or created empty: the folder is filled, the file moved in. */
interface Placed {
  plan: DocumentPlan;
  claimed: RepositoryDocument;
  folder: RepositoryDocument;
}

/** A claimed file already in its new folder, the folder labelled: the file's own values are what is left. */
interface Moved {
  plan: DocumentPlan;
  moved: RepositoryDocument;
  folderPath: string;
}

/**
 * Files into archive-link folders, a page at a time: claim each file, then make its folder with its
 * facets and values and move the file in (one request, the package's chain). A folder an earlier
 * run made, or one created empty where the package has no chain, is labelled the longer way: the
 * folders' facets for the page at once, then each folder's values, then its file moved in.
 */
async function labelWithFolders(plans: DocumentPlan[], deps: IntakeDeps): Promise<IntakeOutcome[]> {
  const outcomes: IntakeOutcome[] = [];
  const placed: Placed[] = [];
  const moved: Moved[] = [];
  for (const result of await Promise.all(plans.map((plan) => placeInFolder(plan, deps)))) {
    if ('folder' in result) placed.push(result);
    else if ('moved' in result) moved.push(result);
    else outcomes.push(result);
  }
  const withFacets = await addFacets(
    placed,
    plans[0]?.entry.facets ?? [],
    (p) => p.folder.uid,
    deps,
    (p, error) => outcomes.push({ ...failure(p.plan, error), folderPath: p.folder.path }),
  );
  outcomes.push(
    ...(await Promise.all([
      ...withFacets.map((p) => fillFolder(p, deps)),
      ...moved.map((m) => writeValues(m.plan, m.moved, deps, m.folderPath)),
    ])),
  );
  return outcomes;
}

/**
 * The folder is found again by `dc:source` = the file's UUID, so a run that died after
 * creating it never creates a second one.
 */
async function placeInFolder(plan: DocumentPlan, deps: IntakeDeps): Promise<Placed | Moved | IntakeOutcome> {
  try {
    // Asked before the claim: a failed look-up leaves the file as it was, for the next run.
    const inOneRequest = await deps.folderChain.installed();
    // Two runs must not both make a folder for one file: the file is claimed first (the status facet the claim is written to came with the page's facets).
    const claimed = await deps.claims.forFolder(plan.doc, deps.claimTimeoutMs);
    if (typeof claimed === 'string') return { plan, skipped: claimed };
    const earlier = await earlierFolder(plan, deps);
    if (earlier !== undefined) return { plan, claimed, folder: earlier };
    return await newFolder(plan, claimed, inOneRequest, deps);
  } catch (error) {
    return failure(plan, error);
  }
}

/**
 * A new folder made, labelled and given its file in one request (the package's chain), or created
 * bare for the longer way: without the chain, or when the repository refuses it to the job's user.
 */
async function newFolder(
  plan: DocumentPlan,
  claimed: RepositoryDocument,
  inOneRequest: boolean,
  deps: IntakeDeps,
): Promise<Placed | Moved> {
  const { name, title } = plan.folder as { name: string; title: string };
  const parent = { uid: plan.doc.parentRef as string, path: plan.doc.path.slice(0, plan.doc.path.lastIndexOf('/')) };
  const properties = { 'dc:title': title, 'dc:source': plan.doc.uid };
  if (inOneRequest) {
    const folder = { name, properties, useCaseFacet: useCaseFacetOf(plan), values: plan.values };
    try {
      const moved = await deps.writer.placeInNewFolder(claimed, parent, folder);
      return { plan, moved, folderPath: moved.path.slice(0, moved.path.lastIndexOf('/')) };
    } catch (error) {
      // Refused before it ran (AutomationServer.accept): nothing was made, the longer way makes it.
      if (!(error instanceof NotServedError)) throw error;
      deps.folderChain.refused();
    }
  }
  return { plan, claimed, folder: await deps.writer.createFolder(parent, name, properties) };
}

/** The entry's facet besides fct_erp_http_content: a valid mapping entry has exactly one (mapping-schema.ts). */
function useCaseFacetOf(plan: DocumentPlan): string {
  return plan.entry.facets.find((facet) => facet !== HTTP_CONTENT_FACET) as string;
}

/**
 * The folder an earlier run made for the file, found by `dc:source` = its UUID. A file the intake
 * never touched (no status facet when its page was read) has none: a run makes a folder only
 * under a claim, and the claim is written to that facet, so the search is left out (one request
 * fewer per new file). A page read from a lagging index changes nothing: its stale changeToken
 * makes the claim fail (409) had another run claimed the file meanwhile.
 */
async function earlierFolder(plan: DocumentPlan, deps: IntakeDeps): Promise<RepositoryDocument | undefined> {
  if (!plan.doc.facets.includes(STATUS_FACET)) return undefined;
  const existing = await deps.client.search(
    `SELECT * FROM Folder WHERE dc:source = ${nxqlString(plan.doc.uid)} AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0`,
    { pageSize: 2 },
  );
  return existing.entries[0];
}

async function fillFolder({ plan, claimed, folder }: Placed, deps: IntakeDeps): Promise<IntakeOutcome> {
  try {
    await deps.writer.update(folder, plan.values);
    const doc = plan.doc.parentRef === folder.uid ? claimed : await deps.writer.move(claimed, folder);
    return await writeValues(plan, doc, deps, folder.path);
  } catch (error) {
    return { ...failure(plan, error), folderPath: folder.path };
  }
}
