import { batches } from '../../config/call-schema.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { CallItem } from '../calls/execute.js';
import { admit } from '../lanes/admit.js';
import type { InHand } from '../lanes/in-hand.js';
import type { TaskLanes } from '../lanes/task-lanes.js';
import { whenAll } from '../when-all.js';

/**
 * Hands a source's page of one task's documents to the task's lanes: each document is taken once
 * (InHand: not while another source or task holds it, nor again once settled in this run), checked
 * as it is now and admitted (lanes/admit.ts), then sent to the lane of the SAP system it names, a
 * unit at a time. From a search, a unit for a lane that has its slots' and a page's worth waiting
 * already (a slow system, while the reading goes on for the others) is left unclaimed for the next
 * run; the intake's documents always go, as it labels no further ahead than `intakeRoundSize`.
 * Past the run's `--limit`, units are left for the next run too.
 */
export async function handOver(
  inHand: InHand,
  task: TaskLanes,
  page: RepositoryDocument[],
  from: 'intake' | 'search',
): Promise<void> {
  // A document the intake claimed as it labelled it is the intake's to hand over, even if a search meets it first.
  const { claims } = task.ctx.deps;
  const mine = page.filter((doc) => (from === 'intake' || !claims.awaitsLane(doc.uid)) && inHand.take(doc.uid, from));
  if (mine.length === 0) return;
  task.touch();
  const admitted = await whenAll(
    mine.map(async (doc) => {
      const item = await admit(task.ctx, doc);
      // A hit no longer due makes no record: it is let go here.
      if (item === undefined) inHand.done(doc.uid);
      return item;
    }),
  );
  const table = batches(task.ctx.call.parameters);
  const { budget } = task.ctx.deps;
  for (const [system, items] of bySystem(admitted.filter((item) => item !== undefined))) {
    const lane = task.lane(system);
    const sent = units(table, items);
    // What one page can add to a lane's waiting units: a system alone never has more waiting than its slots and this.
    const slack = table ? sent.length : task.task.batchSize;
    for (const unit of sent) {
      if (from === 'search' && lane.full(slack)) {
        lane.leave(
          unit,
          `left for the next run: ERP system ${system} has more calls waiting than its slots and a page`,
        );
        continue;
      }
      const granted = budget.take(unit.length);
      if (granted > 0) lane.send(unit.slice(0, granted));
      if (granted < unit.length) lane.leave(unit.slice(granted), `left for the next run: ${budget.reason}`);
    }
  }
}

function bySystem(items: CallItem[]): Array<[string, CallItem[]]> {
  const groups = new Map<string, CallItem[]>();
  for (const item of items) {
    const system = String(item.doc.properties['erpHttpContent:source']);
    const group = groups.get(system);
    if (group) group.push(item);
    else groups.set(system, [item]);
  }
  return [...groups];
}

/**
 * What goes out in one call: for a call that takes a table (bar codes), the page's documents of a
 * system together, but a document whose earlier attempt may have reached SAP alone (it is looked
 * up first, and holds its claim no longer than that); one each for any other call.
 */
function units(table: boolean, items: CallItem[]): CallItem[][] {
  if (!table) return items.map((item) => [item]);
  const fresh = items.filter((item) => !item.repeat);
  const alone = items.filter((item) => item.repeat).map((item) => [item]);
  return fresh.length === 0 ? alone : [fresh, ...alone];
}
