import type { Logger } from '../../log.js';
import type { Claims } from '../claims/claims.js';
import type { Lanes } from '../lanes/lanes.js';
import type { RunRecords } from '../run-records.js';
import type { Outage } from '../lanes/system-health.js';
import { outageText } from '../report/report.js';
import { whenAll } from '../when-all.js';

/** What stopped SAP systems or lanes in the run, and each task they stopped, with why. */
export interface Ended {
  outages: Outage[];
  stopped: Array<{ task: string; reason: string }>;
}

/**
 * The last stage, whatever stopped the sources: what the lanes have under way settled, the claims
 * the intake wrote that no lane took given back, the batch logs flushed, and the outages.
 */
export async function settleRun(lanes: Lanes, claims: Claims, records: RunRecords, log: Logger): Promise<Ended> {
  await Promise.all(lanes.tasks.map((task) => task.drained()));
  await giveBack(lanes, claims);
  records.tasksEnded();
  return outagesOf(lanes, log);
}

/** Claims the intake wrote with documents' labels that no lane took (the run stopped reading first): given back. */
async function giveBack(lanes: Lanes, claims: Claims): Promise<void> {
  const left = claims.notTaken();
  await whenAll(
    lanes.tasks.map((task) =>
      task.giveBack(
        left.filter((held) => held.task === task.task.name),
        'claimed as it was labelled and never handed to a lane (the run stopped reading): left for the next run, no attempt charged',
      ),
    ),
  );
}

/** The run's outages, each task stopped by one of them, and one line at level error each. */
function outagesOf(lanes: Lanes, log: Logger): Ended {
  const outages = lanes.outages();
  for (const outage of outages) log.error('ERP outage', { ...outage });
  const stopped = lanes.tasks.flatMap((task) => {
    const stoppedBy = outages.filter((o) =>
      o.task === undefined
        ? o.transport === task.task.function && task.systems.includes(o.system)
        : o.task === task.task.name,
    );
    return stoppedBy.length === 0 ? [] : [{ task: task.task.name, reason: stoppedBy.map(outageText).join('; ') }];
  });
  return { outages, stopped };
}
