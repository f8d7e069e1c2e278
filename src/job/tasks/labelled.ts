import type { TaskConfig } from '../../config/task-schema.js';
import { nxqlList } from '../../nxql/literal.js';
import type { RepositoryReader } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';

/** Uuids per filter check: the query stays well inside the 8 KB a request line may take (Tomcat's maxHttpHeaderSize). */
const CHECKED_AT_ONCE = 100;

/**
 * The documents this run's intake labelled READY for the task's use case, for the task to send
 * in the same run. A search answered from an index that lags writes (Elasticsearch) finds them
 * only once the index has caught up, which may be the next run; a dry run's intake writes
 * nothing, so its tasks would find none at all. The task's `systems` are checked on the document,
 * its `filter` by the repository's search (`ecm:uuid IN (…) AND (filter)`), so on the document as
 * the index has it, possibly before it was labelled. Documents in `seen` (found by the task's own
 * search) are left out.
 */
export async function* labelledPages(
  task: TaskConfig,
  docs: readonly RepositoryDocument[],
  client: RepositoryReader,
  seen: ReadonlySet<string>,
  stop: AbortSignal,
): AsyncGenerator<RepositoryDocument[]> {
  for (let i = 0; i < docs.length && !stop.aborted; i += task.batchSize) {
    const candidates = docs
      .slice(i, i + task.batchSize)
      .filter(
        (doc) =>
          !seen.has(doc.uid) &&
          (task.systems === undefined || task.systems.includes(String(doc.properties['erpHttpContent:source']))),
      );
    const kept = task.filter === undefined ? candidates : await matching(client, candidates, task.filter);
    if (kept.length > 0) yield kept;
  }
}

async function matching(
  client: RepositoryReader,
  docs: RepositoryDocument[],
  filter: string,
): Promise<RepositoryDocument[]> {
  const found = new Set<string>();
  for (let i = 0; i < docs.length; i += CHECKED_AT_ONCE) {
    const uids = docs.slice(i, i + CHECKED_AT_ONCE).map((doc) => doc.uid);
    const page = await client.search(`SELECT * FROM Document WHERE ecm:uuid IN ${nxqlList(uids)} AND (${filter})`, {
      pageSize: uids.length,
      reads: [],
    });
    for (const hit of page.entries) found.add(hit.uid);
  }
  return docs.filter((doc) => found.has(doc.uid));
}
