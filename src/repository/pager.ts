import { nxqlString } from '../nxql/literal.js';
import type { RepositoryReader } from './client.js';
import { AnswerTooLargeError } from './transport.js';
import type { RepositoryDocument, SearchPage } from './document.js';
import { NEVER } from '../stop.js';

/**
 * Pages through `SELECT … WHERE <conditions>` (top-level conditions ANDed, no ORDER BY) by
 * keyset: each page asks for the documents after the last uuid of the one before, in uuid
 * order. Documents that leave the result set as they are processed (intake labels them,
 * tasks claim them) never make it skip one, the next page can be read while earlier ones are
 * still being worked on, and a page costs the same at the end of a large result as at its
 * start (an offset would make the server skip everything before it, and Elasticsearch-backed
 * searches refuse offsets past 10,000). Once `stop` fires, no further page is read. `reads`: the
 * properties the caller reads from the documents (RepositoryReader's search); all when not given.
 *
 * The end is where the server says there is no next page, not a short page: an index that lags
 * drops the hits of documents deleted since it saw them, so a page can come back short, or
 * empty, with more after it (the next one then skips the dropped hits by offset). A server whose
 * `maxPageSize` is below `pageSize` gives fewer documents than asked and works its next-page flag
 * out for the size asked: its own size is used from then on. `onCount` hears the first page's
 * `resultsCount`, what the search found in all (as the index has it; -1 when the server could
 * not count, as a page provider that does not), for progress. A page too large to hold
 * (AnswerTooLargeError) is asked again half as large, and the pages after it too; a single
 * document too large goes to `onTooLarge`, read without its properties, and the search goes on
 * after it (without `onTooLarge`, it stops the search).
 */
export async function* drain(
  client: RepositoryReader,
  query: string,
  pageSize: number,
  stop = NEVER,
  reads?: string[],
  onCount: (resultsCount: number) => void = () => undefined,
  onTooLarge?: (doc: RepositoryDocument) => void,
): AsyncGenerator<RepositoryDocument[]> {
  let after: string | undefined;
  let size = pageSize;
  let offset = 0;
  let first = true;
  while (!stop.aborted) {
    const keyset = after === undefined ? '' : ` AND ecm:uuid > ${nxqlString(after)}`;
    const selection = `${query}${keyset} ORDER BY ecm:uuid`;
    let page: SearchPage;
    try {
      page = await client.search(selection, { pageSize: size, offset, reads });
    } catch (error) {
      // Documents with large values: the same documents in smaller pages, down to one at a time.
      if (!(error instanceof AnswerTooLargeError)) throw error;
      if (size > 1) {
        size = Math.ceil(size / 2);
        continue;
      }
      if (onTooLarge === undefined) throw tooLargeAlone(error, selection);
      // One document alone: read without its properties, handed over as its own failure, passed by.
      for (const bare of (await client.search(selection, { pageSize: 1, offset, reads: [] })).entries) {
        onTooLarge(bare);
        after = bare.uid;
      }
      size = pageSize;
      continue;
    }
    // Stopped while the page was on its way: nothing of it is claimed.
    if (stop.aborted) return;
    if (first) onCount(page.resultsCount);
    first = false;
    const { entries } = page;
    if (entries.length > 0) {
      yield entries;
      after = entries[entries.length - 1].uid;
    }
    const clamped = page.maxPageSize !== undefined && page.maxPageSize > 0 && page.maxPageSize < size;
    if (clamped) size = page.maxPageSize as number;
    if (!page.isNextPageAvailable && !(clamped && entries.length > 0)) return;
    offset = entries.length === 0 ? offset + size : 0;
  }
}

/** One document too large to read: which one, for a person to find with NXQL. */
const tooLargeAlone = (error: AnswerTooLargeError, query: string): AnswerTooLargeError =>
  new AnswerTooLargeError(
    `${error.message}; one document alone is: the first that ${JSON.stringify(query)} finds, whose large value stops every search that reads it until it is removed`,
    { target: error.target },
  );

/**
 * Work on pages as they are read, with the next page already read: its search runs while earlier
 * pages are worked on, so the repository and the ERP are never idle waiting for a page boundary.
 * After handing a page over, the next one waits for `room` (given the pages under way): a number
 * of pages at once (`pagesAtOnce`), or what the work ahead allows (a task's call slots). Rejects
 * with the first error once the pages under way have settled; no page is read after it.
 */
export async function eachPage<T>(
  pages: AsyncIterable<T[]>,
  room: (running: ReadonlySet<Promise<void>>) => Promise<unknown> | undefined,
  handle: (page: T[]) => Promise<void>,
): Promise<void> {
  const iterator = pages[Symbol.asyncIterator]();
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let next = iterator.next();
  try {
    for (let read = await next; !read.done; read = await next) {
      next = iterator.next();
      // A read that fails while this one waits for room is thrown when it is awaited, not lost.
      next.catch(() => undefined);
      const work: Promise<void> = handle(read.value)
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .then(() => {
          running.delete(work);
        });
      running.add(work);
      await room(running);
      if (failure) break;
    }
  } finally {
    await Promise.all(running);
    // A page read ahead and not worked on: let its search settle, then close the source.
    await next.catch(() => undefined);
    await iterator.return?.();
  }
  if (failure) throw failure.error;
}

/** Room for the next page while fewer than `depth` are under way. */
export const pagesAtOnce =
  (depth: number) =>
  (running: ReadonlySet<Promise<void>>): Promise<void> | undefined =>
    running.size >= depth ? Promise.race(running) : undefined;
