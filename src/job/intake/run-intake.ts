import { drain, eachPage, pagesAtOnce } from '../../repository/pager.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { IntakeRecord } from '../records.js';
import { applyPlans, type IntakeDeps } from './apply.js';
import { intakeRecord } from './record.js';
import type { FieldLimit } from '../../config/field-limits.js';
import { ANSWER_MAX_TEXT } from '../../bounded-body.js';
import type { UseCase } from '../../config/task-schema.js';
import { useCaseOf, type MappingFile } from './mapping-schema.js';
import { intakeQuery, intakeReads, planDocument, stillNew } from './plan.js';
import { statusOf } from '../../status/facet.js';

/** What the intake works with besides its labelling's (apply.ts). */
export type IntakeRunDeps = IntakeDeps & {
  pageSize: number;
  stop: AbortSignal;
  alsoReads: (useCase: UseCase) => string[];
  /** The SAP fields a property's value goes to (field-limits.ts): a value too long for them is the document's error. */
  limits: Map<string, FieldLimit[]>;
  /** Which documents the run takes, as a condition on the uuid ('' for every document). */
  scope: string;
};

/** Pages labelled at once: the next page is read and labelled while the one before finishes. */
const PAGES_IN_FLIGHT = 2;

/**
 * The `Document created` replacement: label every new File under each mapped path; no new
 * page once the run is stopping. `alsoReads`: what the tasks of a use case read from a document. Each document's record goes to `onRecord` as soon as it is known, with the document as labelled,
 * so nothing piles up however large the backlog.
 */
export async function runIntake(
  mapping: MappingFile,
  deps: IntakeRunDeps & {
    /** After each page: the intake's source waits here while enough of its documents are unsettled. */
    afterPage: () => Promise<void>;
  },
  onRecord: (record: IntakeRecord, labelled: RepositoryDocument | undefined) => void,
): Promise<void> {
  const paths = mapping.mapping.map((e) => e.path);
  for (const entry of mapping.mapping) {
    // What the tasks read too: they send the documents labelled here in the same run.
    const reads = [...intakeReads(entry), ...deps.alsoReads(useCaseOf(entry))];
    // A document whose values alone are too large to read is its own intake error; the others go on.
    const tooLarge = (doc: RepositoryDocument): void => {
      const error = `its values as the intake reads them are larger than ${ANSWER_MAX_TEXT} together; it is left out until its large value is made smaller`;
      deps.log.warn('document not labelled', { uid: doc.uid, path: doc.path, mapping: entry.path, error });
      onRecord(intakeRecord({ plan: planDocument(entry, { ...doc, properties: {} }, deps.limits), error }), undefined);
    };
    const query = `${intakeQuery(entry, paths)}${deps.scope}`;
    await eachPage(
      drain(deps.client, query, deps.pageSize, deps.stop, reads, deps.found, tooLarge),
      pagesAtOnce(PAGES_IN_FLIGHT),
      async (page) => {
        const plans = page
          .filter((doc) => stillNew(entry, paths, doc))
          .map((doc) => planDocument(entry, doc, deps.limits));
        for (const outcome of await applyPlans(plans, deps)) {
          const fields = { uid: outcome.plan.doc.uid, path: outcome.plan.doc.path, mapping: entry.path };
          if (outcome.skipped !== undefined)
            deps.log.debug('document left to another run', { ...fields, reason: outcome.skipped });
          else if (outcome.error === undefined)
            deps.log.debug('document labelled', { ...fields, status: statusOf(outcome.plan.status) });
          else
            deps.log.warn('document not labelled', {
              ...fields,
              error: outcome.error,
              transient: outcome.transient ?? false,
            });
          onRecord(intakeRecord(outcome), outcome.labelled);
        }
        await deps.afterPage();
      },
    );
  }
}
