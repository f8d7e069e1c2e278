import { nxqlList } from '../../nxql/literal.js';
import type { RepositoryReader } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { UseCase } from '../../config/task-schema.js';
import type { InHand } from '../lanes/in-hand.js';
import type { TaskLanes } from '../lanes/task-lanes.js';
import { handOver } from './hand-over.js';

/** Uuids per filter check: the query stays well inside the 8 KB a request line may take (Tomcat's maxHttpHeaderSize). */
const CHECKED_AT_ONCE = 100;

/**
 * What the intake labelled READY, handed to the tasks of its use case as it is labelled, in pages
 * of each task's batchSize: a search answered from an index that lags writes (Elasticsearch)
 * would find them only once the index has caught up, and a dry run's intake writes nothing for a
 * search to find. A task's `systems` are checked on the document, its `filter` by the repository's
 * search (`ecm:uuid IN (…) AND (filter)`), so on the document as the index has it, possibly
 * before it was labelled. With two tasks for one use case, the first to take a document sends it.
 */
export class LabelledFeed {
  private readonly pages = new Map<TaskLanes, RepositoryDocument[]>();
  private readonly handing = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly tasks: TaskLanes[],
    private readonly inHand: InHand,
    private readonly client: RepositoryReader,
    /** Once it fires nothing more is handed over: what was labelled stays READY for the next run. */
    private readonly stop: AbortSignal,
    /** Hears how many documents a task was handed, for progress. */
    private readonly found: (task: TaskLanes, count: number) => void,
  ) {}

  add(useCase: UseCase, doc: RepositoryDocument): void {
    const system = String(doc.properties['erpHttpContent:source']);
    for (const task of this.tasks) {
      if (!task.takes(useCase, system)) continue;
      const page = this.pages.get(task) ?? [];
      page.push(doc);
      this.pages.set(task, page);
      if (page.length < task.task.batchSize) continue;
      this.pages.delete(task);
      this.hand(task, page);
    }
  }

  /** Hands over what is gathered, and resolves once every page handed is with the lanes; throws the first failure. */
  async flush(): Promise<void> {
    for (const [task, page] of this.pages) this.hand(task, page);
    this.pages.clear();
    while (this.handing.size > 0) await Promise.all(this.handing);
    if (this.failure) throw this.failure.error;
  }

  private hand(task: TaskLanes, page: RepositoryDocument[]): void {
    if (this.stop.aborted) return;
    const handing: Promise<void> = this.filtered(task, page)
      .then((kept) => {
        this.found(task, kept.length);
        return handOver(this.inHand, task, kept, 'intake');
      })
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => this.handing.delete(handing));
    this.handing.add(handing);
  }

  private async filtered(task: TaskLanes, docs: RepositoryDocument[]): Promise<RepositoryDocument[]> {
    const { filter } = task.task;
    if (filter === undefined) return docs;
    const found = new Set<string>();
    for (let i = 0; i < docs.length; i += CHECKED_AT_ONCE) {
      const uids = docs.slice(i, i + CHECKED_AT_ONCE).map((doc) => doc.uid);
      const page = await this.client.search(
        `SELECT * FROM Document WHERE ecm:uuid IN ${nxqlList(uids)} AND (${filter})`,
        { pageSize: uids.length, reads: [] },
      );
      for (const hit of page.entries) found.add(hit.uid);
    }
    return docs.filter((doc) => found.has(doc.uid));
  }
}
