import type { TaskConfig } from '../config/task-schema.js';
import { ConfigError, ConflictError, PermanentError } from '../../common/errors.js';
import type { Logger } from '../log.js';
import { unlessMissing, type RepositoryReader } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import { drain } from '../repository/pager.js';
import type { RepositoryWriter } from '../ports/repository-writer.js';
import { statusOf } from '../status/facet.js';
import { statusQuery } from '../status/query.js';
import { USE_CASE_FACETS } from '../status/readiness.js';
import { putBack } from '../status/transitions.js';

interface RetryOptions {
  tasks: TaskConfig[];
  /** One document; it must be FAILED and belong to one of the tasks. */
  uid?: string;
}

/**
 * Puts FAILED documents back to READY with no attempts counted, so the next run sends them
 * again. Written with each document's changeToken: a document a run is touching is left alone.
 */
export async function retryFailed(
  options: RetryOptions,
  client: RepositoryReader,
  writer: RepositoryWriter,
  log: Logger,
): Promise<RepositoryDocument[]> {
  const candidates =
    options.uid === undefined ? await allFailed(options.tasks, client) : [await oneFailed(options, client)];
  const reset: RepositoryDocument[] = [];
  for (const doc of candidates) {
    try {
      await writer.update(doc, putBack());
      reset.push(doc);
      log.info(writer.dryRun ? 'document would be put back' : 'document put back', { uid: doc.uid, path: doc.path });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      log.warn('document changed meanwhile, left alone', { uid: doc.uid, path: doc.path });
    }
  }
  return reset;
}

async function allFailed(tasks: TaskConfig[], client: RepositoryReader): Promise<RepositoryDocument[]> {
  const found = new Map<string, RepositoryDocument>();
  for (const task of tasks) {
    for await (const page of drain(client, statusQuery(task, 'FAILED'), 200))
      for (const doc of page) found.set(doc.uid, doc);
  }
  return [...found.values()];
}

async function oneFailed(options: RetryOptions, client: RepositoryReader): Promise<RepositoryDocument> {
  const uid = options.uid as string;
  const doc = await unlessMissing(client.getById(uid));
  if (doc === undefined)
    throw new ConfigError([
      { file: 'command line', path: 'doc', message: `no document has the uid ${uid} (the reports list each one's)` },
    ]);
  const status = statusOf(doc.properties);
  if (status !== 'FAILED')
    throw new PermanentError(
      `document ${doc.path} (${uid}) is ${String(status ?? 'not a task document')}, not FAILED`,
      { target: uid },
    );
  if (!options.tasks.some((task) => doc.facets.includes(USE_CASE_FACETS[task.useCase]))) {
    throw new PermanentError(
      `document ${doc.path} (${uid}) belongs to none of the tasks ${options.tasks.map((t) => t.name).join(', ')}`,
      { target: uid },
    );
  }
  return doc;
}
