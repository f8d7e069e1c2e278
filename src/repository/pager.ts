import type { RepositoryClient } from './client.js';
import type { RepositoryDocument } from './document.js';
import { NEVER } from '../stop.js';

/**
 * Pages through a query whose results leave the result set as they are processed
 * (intake labels them, tasks claim them). Plain page numbers would skip documents, so
 * the offset only counts documents already seen that are still there; documents seen
 * before are never handed out twice. Works the same when nothing changes (dry run).
 * The query must have a stable order (ORDER BY ecm:uuid). Once `stop` fires, no further page is read.
 */
export async function* drain(client: RepositoryClient, query: string, pageSize: number, stop = NEVER): AsyncGenerator<RepositoryDocument[]> {
  const seen = new Set<string>();
  let offset = 0;
  while (!stop.aborted) {
    const page = await client.search(query, { pageSize, offset });
    const fresh: RepositoryDocument[] = [];
    for (const doc of page.entries) {
      if (seen.has(doc.uid)) offset++;
      else {
        seen.add(doc.uid);
        fresh.push(doc);
      }
    }
    if (fresh.length > 0) yield fresh;
    if (page.entries.length < pageSize) return;
  }
}
