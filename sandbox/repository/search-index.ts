import { AsyncLocalStorage } from 'node:async_hooks';
import { runQuery, type QueryResult, type SortKey } from './query.js';
import { Store, type Actor, type StoredDoc } from './store.js';

/**
 * The search index a stock Nuxeo answers REST searches from: Elasticsearch (nuxeo.defaults sets
 * `elasticsearch.enabled=true` and lists `REST_API_SEARCH_ADAPTER` in
 * `elasticsearch.override.pageproviders`; nuxeo/nuxeo 2021 and 2023,
 * server/nuxeo-nxr-server/src/main/resources/templates/common-base/nuxeo.defaults).
 *
 * - Fed after commit: `ElasticSearchInlineListener` stacks the transaction's indexing commands and
 *   runs them in `afterCompletion`, through the WorkManager, and the index shows them after its
 *   refresh (about a second by default, inferred: Nuxeo sets no `refresh_interval`). Here every
 *   committed change reaches the index `lagMs` later, in commit order.
 * - `nx-es-sync: true` on a request (`ElasticSearchFilter`, on /api/* and /site/*) indexes that
 *   request's writes before its answer and refreshes. Nuxeo keeps the recursive part of a move or
 *   a removal asynchronous; here the whole request's writes are synchronous (the job moves a file
 *   with no children).
 * - Hits are read again from the repository (`VcsFetcher`: `SELECT … WHERE ecm:uuid IN (…)`): the
 *   documents returned are current, while the match was made on the index; a hit whose document
 *   is gone, or no longer readable, is dropped and the page comes back short, its count unchanged.
 */
export class SearchIndex {
  /** The index's own copy of the repository, as of the last change it was fed; searches are matched on it. */
  readonly indexed: Store;
  private readonly pending: Array<{ due: number; uid: string; doc: StoredDoc | undefined }> = [];
  private timer?: NodeJS.Timeout;
  private readonly syncRequest = new AsyncLocalStorage<boolean>();

  constructor(
    private readonly live: Store,
    public lagMs = 0,
  ) {
    this.indexed = new Store(live.registry, undefined, live);
    // Parents before their children, so that the copy's folder counts add up.
    for (const doc of [live.get(live.rootId) as StoredDoc, ...live.descendants(live.rootId)])
      this.indexed.mirror(doc.uid, doc);
    live.onCommit = (uid, doc) => this.feed(uid, doc);
  }

  /** Run `work` (a request, or a test's own write) with its writes indexed before it ends: `nx-es-sync: true`. */
  sync<T>(work: () => T): T {
    return this.syncRequest.run(true, work);
  }

  private feed(uid: string, doc: StoredDoc | undefined): void {
    if (this.lagMs === 0 || this.syncRequest.getStore() === true) {
      // An older change of the same document still on its way must not land after this one.
      for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i].uid === uid) this.pending.splice(i, 1);
      this.indexed.mirror(uid, doc);
      return;
    }
    this.pending.push({ due: performance.now() + this.lagMs, uid, doc });
    this.schedule();
  }

  /** Everything committed so far reaches the index now, as it would given the time (minutes between scheduled runs). */
  catchUp(): void {
    for (const { uid, doc } of this.pending.splice(0)) this.indexed.mirror(uid, doc);
  }

  private schedule(): void {
    if (this.timer !== undefined || this.pending.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const now = performance.now();
        while (this.pending.length > 0 && this.pending[0].due <= now) {
          const { uid, doc } = this.pending.shift() as { uid: string; doc: StoredDoc | undefined };
          this.indexed.mirror(uid, doc);
        }
        this.schedule();
      },
      Math.max(0, this.pending[0].due - performance.now()),
    );
    // A sandbox being stopped does not wait for its index.
    this.timer.unref();
  }

  /** An NXQL search matched on the index; its hits read again from the repository. */
  search(actor: Actor, query: string, page: { offset: number; limit: number; sort?: SortKey[] }): QueryResult {
    const result = runQuery(this.indexed, actor, query, page);
    const entries = result.entries
      .map((hit) => this.live.get(hit.uid))
      .filter((doc): doc is StoredDoc => doc !== undefined && this.live.can(actor, doc, 'Browse'));
    return { ...result, entries };
  }
}
