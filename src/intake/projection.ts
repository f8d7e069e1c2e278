import type { TaskConfig } from '../config/task-schema.js';
import type { RepositoryClient } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import { drain } from '../repository/pager.js';
import { USE_CASE_FACETS } from '../tasks/readiness.js';
import type { MappingFile } from './mapping-schema.js';
import { intakeQuery, intakeReads, planDocument, type DocumentPlan } from './plan.js';

/** A planned document as the repository would hold it once labelled: the plan's facets, values and status on top of its own. */
function labelled(plan: DocumentPlan): RepositoryDocument {
  return {
    ...plan.doc,
    facets: [...new Set([...plan.doc.facets, ...plan.facets])],
    properties: { ...plan.doc.properties, ...plan.values, ...plan.status },
  };
}

/**
 * A dry run's intake writes nothing, so no task's search finds what it would have labelled. This
 * is that backlog for one task: the unlabelled files read again page by page (nothing is held
 * between pages), planned as the intake plans them and given the facets and values the plan would
 * write, keeping those the task would pick up (its use case's facet, its systems). The task's
 * `filter` is asked of the repository with the intake's search, so it is judged on the document
 * as it is before labelling: a filter on a value the intake itself writes matches nothing here.
 */
export function labelledByIntake(mapping: MappingFile, client: RepositoryClient, stop: AbortSignal) {
  const paths = mapping.mapping.map((entry) => entry.path);
  return async function* backlog(task: TaskConfig, reads: string[]): AsyncGenerator<RepositoryDocument[]> {
    for (const entry of mapping.mapping.filter((e) => e.facets.includes(USE_CASE_FACETS[task.useCase]))) {
      const query = task.filter === undefined ? intakeQuery(entry, paths) : `${intakeQuery(entry, paths)} AND (${task.filter})`;
      for await (const page of drain(client, query, task.batchSize, stop, [...intakeReads(entry), ...reads])) {
        const docs = page.map((doc) => planDocument(entry, doc))
          .filter((plan) => plan.unresolved.length === 0)
          .map(labelled)
          .filter((doc) => task.systems === undefined || task.systems.includes(String(doc.properties['erpHttpContent:source'])));
        if (docs.length > 0) yield docs;
      }
    }
  };
}
