import type { ClaimTerms } from '../claims/claim.js';
import type { DocumentPlan } from '../intake/plan.js';
import { safeToRepeat } from '../lanes/context.js';
import type { TaskLanes } from '../lanes/task-lanes.js';

/**
 * A document ready when it is labelled is claimed for its task in the same write (one write fewer
 * per document), when the claim can only be one task's and costs nothing a crash could not mend:
 * exactly one task of the run takes its use case and system (TaskLanes.takes, LabelledFeed's rule), without a
 * `filter` (the repository checks that after the labelling), with a call safe to repeat (a claim a
 * crash leaves is looked up in SAP once it expires, never left to an operator), and a lane for the
 * system that is not down. The run asks for none in a dry run, or with `--limit` (a pilot hands out
 * documents a unit at a time). Answers the task to claim it for (claims/claims.ts `label`), if any.
 */
export function claimAtLabel(tasks: TaskLanes[]): (plan: DocumentPlan) => ClaimTerms | undefined {
  return (plan) => {
    if (plan.missing.length > 0) return undefined;
    const system = String({ ...plan.doc.properties, ...plan.values }['erpHttpContent:source']);
    const takers = tasks.filter((task) => task.takes(plan.useCase, system));
    if (takers.length !== 1) return undefined;
    const [lanes] = takers;
    const { task, ctx } = lanes;
    if (task.filter !== undefined || !safeToRepeat(ctx.call) || !lanes.canSend(system)) return undefined;
    return task;
  };
}
