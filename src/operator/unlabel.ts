import { errorMessage } from '../../common/errors.js';
import type { Logger } from '../log.js';
import { nxqlString } from '../nxql/literal.js';
import type { RepositoryWriter } from '../ports/repository-writer.js';
import type { RepositoryReader } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import { drain } from '../repository/pager.js';
import { attemptsOf, claimedBy, STATUS, STATUS_FACET, statusOf } from '../status/facet.js';
import { HTTP_CONTENT_FACET } from '../status/http-content.js';
import { USE_CASE_FACETS } from '../status/readiness.js';

/**
 * `connect2erp unlabel PATH`: undoes what the intake put on the documents under a folder a wrong
 * mapping entry covered, for those never sent, so that the next run labels them again from the
 * corrected entry (or leaves them, the entry gone). A document never sent is READY or
 * PENDING_INPUT with no attempt ever made: no last attempt, no SAP reference (one that `retry` or
 * `reconcile --requeue` put back to READY was sent once and is left, and listed). Each one is first
 * claimed in a state no run takes (FAILED, "being unlabelled", written with its changeToken, so a
 * run that got there first keeps it), then taken out of its archive-link folder (which goes to the
 * trash once empty), then relieved of the facets and their values. A failure or a crash half-way
 * leaves it FAILED with what to do, which a later `unlabel` takes up again; never a run.
 */

/** The claims this command writes carry its name, so a second pass knows its own. */
const CLAIM = 'unlabel';
const PAGE = 100;
/** Every facet the intake may add; the status facet last, as it holds the claim. */
const FACETS = [HTTP_CONTENT_FACET, ...Object.values(USE_CASE_FACETS), STATUS_FACET];

interface Unlabelled {
  /** Documents relieved of the labels (or that would be, in a dry run). */
  done: number;
  /** Documents left as they are: they may be in SAP. */
  left: number;
  /** Documents it could not finish: FAILED with what to do. */
  failed: number;
}

/** What becomes of each document, as it is decided: printed at once, never held. */
type UnlabelLine = (kind: 'done' | 'left' | 'failed', doc: { uid: string; path: string }, detail?: string) => void;

const ours = (doc: RepositoryDocument): boolean => String(claimedBy(doc.properties)).startsWith(`${CLAIM}/`);

const neverSent = (doc: RepositoryDocument): boolean => {
  const { properties } = doc;
  const status = statusOf(properties);
  const untouched = (key: string): boolean =>
    properties[key] === undefined || properties[key] === null || properties[key] === '';
  return (
    (status === 'READY' || status === 'PENDING_INPUT') &&
    attemptsOf(properties) === 0 &&
    untouched(STATUS.lastAttempt) &&
    untouched(STATUS.erpReference)
  );
};

/** Every labelled file under `path` (the status facet is the intake's mark), in pages. */
const labelledUnder = (path: string): string =>
  `SELECT * FROM File WHERE ecm:path STARTSWITH ${nxqlString(path)} AND ecm:mixinType = ${nxqlString(STATUS_FACET)} AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0`;

export async function unlabel(
  path: string,
  client: RepositoryReader,
  writer: RepositoryWriter,
  log: Logger,
  line: UnlabelLine,
): Promise<Unlabelled> {
  const counts: Unlabelled = { done: 0, left: 0, failed: 0 };
  const token = `${CLAIM}/${Date.now()}`;
  const again = `run connect2erp unlabel ${path} --apply again`;
  for await (const page of drain(client, labelledUnder(path), PAGE)) {
    for (const doc of page) {
      if (!neverSent(doc) && !ours(doc)) {
        counts.left++;
        line(
          'left',
          doc,
          `${String(statusOf(doc.properties))}, sent before or under way: it may be in SAP; reconcile tells`,
        );
        continue;
      }
      let claimed: RepositoryDocument;
      try {
        claimed = await claim(doc, token, again, writer);
      } catch (error) {
        // Changed meanwhile (409), or refused: as it was, for the next pass.
        counts.left++;
        line('left', doc, errorMessage(error));
        continue;
      }
      try {
        const folder = await unlabelOne(claimed, client, writer);
        counts.done++;
        line('done', doc, folder);
        log.debug(writer.dryRun ? 'document would be unlabelled' : 'document unlabelled', {
          uid: doc.uid,
          path: doc.path,
        });
      } catch (error) {
        // Claimed as FAILED already: no run takes it; the message says to run this again.
        counts.failed++;
        line('failed', doc, `${errorMessage(error)}; it stays FAILED until you ${again}`);
      }
    }
  }
  return counts;
}

/** The claim: FAILED, which no run takes, saying what is under way and what to do if it stops. */
async function claim(
  doc: RepositoryDocument,
  token: string,
  again: string,
  writer: RepositoryWriter,
): Promise<RepositoryDocument> {
  const claimed = await writer.update(doc, {
    [STATUS.status]: 'FAILED',
    [STATUS.message]: `being unlabelled since ${new Date().toISOString()}; if this stays, ${again}`,
    [STATUS.claimedBy]: token,
  });
  return { ...doc, changeToken: claimed.changeToken };
}

/** Out of its archive-link folder, facets removed; answers the folder trashed, if any. */
async function unlabelOne(
  doc: RepositoryDocument,
  client: RepositoryReader,
  writer: RepositoryWriter,
): Promise<string | undefined> {
  const folder = await archiveLinkFolder(doc, client);
  if (folder !== undefined) {
    await writer.move(doc, await client.getById(folder.parentRef as string, 'dublincore'));
    await writer.trash(folder);
  }
  for (const facet of FACETS.filter((f) => doc.facets.includes(f))) await writer.removeFacet(doc, facet);
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
