import { errorMessage } from '../../common/errors.js';
import type { Logger } from '../log.js';
import { nxqlString } from '../nxql/literal.js';
import type { RepositoryWriter } from '../ports/repository-writer.js';
import type { RepositoryReader } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import { drain } from '../repository/pager.js';
import { attemptsOf, claimedBy, STATUS_FACET, statusOf } from '../status/facet.js';
import { HTTP_CONTENT_FACET } from '../status/http-content.js';
import { USE_CASE_FACETS } from '../status/readiness.js';
import { inProgress } from '../status/transitions.js';

/**
 * `connect2erp unlabel PATH`: undoes what the intake put on the documents under a folder a wrong
 * mapping entry covered, for those not sent yet, so that the next run labels them again from the
 * corrected entry (or leaves them, the entry gone). A document not sent yet is READY or
 * PENDING_INPUT with no attempt made; any other may be in SAP and is left, and listed. Each one is
 * first claimed (IN_PROGRESS, written with its changeToken, so a run that got there first keeps
 * it and a run after skips it), then taken out of its archive-link folder (which goes to the
 * trash once empty), then relieved of the facets and their values. A crash half-way leaves a
 * claim a later `unlabel` takes up again.
 */

/** The claims this command writes carry its name, so a second pass knows its own. */
const CLAIM = 'unlabel';
const CLAIM_MS = 15 * 60_000;
const PAGE = 100;
/** Every facet the intake may add; the status facet last, as it holds the claim. */
const FACETS = [HTTP_CONTENT_FACET, ...Object.values(USE_CASE_FACETS), STATUS_FACET];

export interface Unlabelled {
  /** Documents relieved of the labels (or that would be, in a dry run). */
  done: Array<{ uid: string; path: string; folder?: string }>;
  /** Documents left as they are, and why. */
  left: Array<{ uid: string; path: string; reason: string }>;
}

const notSent = (doc: RepositoryDocument): boolean => {
  const status = statusOf(doc.properties);
  const ours = String(claimedBy(doc.properties)).startsWith(`${CLAIM}/`);
  return attemptsOf(doc.properties) === 0 && (status === 'READY' || status === 'PENDING_INPUT' || ours);
};

/** Every labelled file under `path` (the status facet is the intake's mark), in pages. */
const labelledUnder = (path: string): string =>
  `SELECT * FROM File WHERE ecm:path STARTSWITH ${nxqlString(path)} AND ecm:mixinType = ${nxqlString(STATUS_FACET)} AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0`;

export async function unlabel(
  path: string,
  client: RepositoryReader,
  writer: RepositoryWriter,
  log: Logger,
): Promise<Unlabelled> {
  const result: Unlabelled = { done: [], left: [] };
  const token = `${CLAIM}/${Date.now()}`;
  for await (const page of drain(client, labelledUnder(path), PAGE)) {
    for (const doc of page) {
      if (!notSent(doc)) {
        const reason = `${String(statusOf(doc.properties))} after ${attemptsOf(doc.properties)} attempt(s): it may be in SAP; reconcile tells`;
        result.left.push({ uid: doc.uid, path: doc.path, reason });
        continue;
      }
      try {
        const folder = await unlabelOne(doc, token, client, writer);
        result.done.push({ uid: doc.uid, path: doc.path, ...(folder === undefined ? {} : { folder }) });
        log.info(writer.dryRun ? 'document would be unlabelled' : 'document unlabelled', {
          uid: doc.uid,
          path: doc.path,
        });
      } catch (error) {
        // Changed meanwhile (409), or refused: its own outcome, the others go on.
        result.left.push({ uid: doc.uid, path: doc.path, reason: errorMessage(error) });
      }
    }
  }
  return result;
}

/** Claims, takes out of its archive-link folder, removes the facets; answers the folder trashed, if any. */
async function unlabelOne(
  doc: RepositoryDocument,
  token: string,
  client: RepositoryReader,
  writer: RepositoryWriter,
): Promise<string | undefined> {
  const claimed = await writer.update(doc, inProgress(token, CLAIM, new Date(), CLAIM_MS));
  const held = { ...doc, changeToken: claimed.changeToken };
  const folder = await archiveLinkFolder(held, client);
  if (folder !== undefined) {
    await writer.move(held, await client.getById(folder.parentRef as string, 'dublincore'));
    await writer.trash(folder);
  }
  for (const facet of FACETS.filter((f) => doc.facets.includes(f))) await writer.removeFacet(held, facet);
  return folder?.path;
}

/** The folder the intake made for the file (its `dc:source` is the file's uid), holding nothing else. */
async function archiveLinkFolder(
  doc: RepositoryDocument,
  client: RepositoryReader,
): Promise<RepositoryDocument | undefined> {
  const parent = await client.getById(doc.parentRef as string, 'dublincore');
  if (parent.properties['dc:source'] !== doc.uid) return undefined;
  const others = await client.search(
    `SELECT * FROM Document WHERE ecm:parentId = ${nxqlString(parent.uid)} AND ecm:uuid <> ${nxqlString(doc.uid)} AND ecm:isTrashed = 0`,
    { pageSize: 1, reads: [] },
  );
  return others.entries.length === 0 ? parent : undefined;
}
