import type { RepositoryReader } from '../../repository/client.js';
import { drain, eachPage } from '../../repository/pager.js';
import { taskQuery } from '../../status/query.js';
import type { InHand } from '../lanes/in-hand.js';
import type { RunSignals } from '../run-signals.js';
import type { TaskLanes } from '../lanes/task-lanes.js';
import { handOver } from './hand-over.js';
import { taskReads } from './reads.js';

interface DueSourceDeps {
  client: RepositoryReader;
  inHand: InHand;
  /** Which documents the run takes, as a condition on the uuid ('' for every document). */
  scope: string;
  /** The run's signals: this search is a source below their `reading`. */
  signals: RunSignals;
  /** Hears how many documents the search found (its first page's count), for progress. */
  found: (count: number) => void;
}

/**
 * A task's search for its documents that are due (ready, waiting for input, due for a retry, or
 * claimed by a run whose claim expired), a page at a time, each handed over to the task's lanes.
 * The next page is read while a lane has room (TaskLanes.room); reading stops once every system
 * the task may send to is down, so an outage is not read through.
 */
export async function dueSource(task: TaskLanes, deps: DueSourceDeps): Promise<void> {
  if (task.allDown) return;
  const own = deps.signals.source();
  const query = `${taskQuery(task.task, task.ctx.now())}${deps.scope}`;
  const pages = drain(
    deps.client,
    query,
    task.task.batchSize,
    own.signal,
    taskReads(task.task, task.ctx.call, task.ctx.deps.systemNames.map(task.ctx.deps.system)),
    deps.found,
  );
  const room = async (running: ReadonlySet<Promise<void>>): Promise<void> => {
    // A page being handed over has not queued its units yet: the room is known once it has.
    await Promise.allSettled(running);
    await task.room(own.signal);
    if (task.allDown) own.end();
  };
  await eachPage(pages, room, (page) => handOver(deps.inHand, task, page, 'search'));
}
