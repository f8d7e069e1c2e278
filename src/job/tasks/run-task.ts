import { batches } from '../../config/call-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { AuthenticationError, NotSentError } from '../../../common/errors.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RestRequest } from '../../erp/rest-client.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { concat, drain, eachPage } from '../../repository/pager.js';
import { admit, type Admitted } from './admit.js';
import { CallSlots } from './call-slots.js';
import { execute, type CallAdapter, type CallOutcome } from './calls/execute.js';
import { restCall } from './calls/rest-call.js';
import { rfcCall } from './calls/rfc-call.js';
import type { DateFormat } from './mapping.js';
import { base, type TaskContext, type TaskDeps } from './context.js';
import { labelledPages } from './labelled.js';
import { taskQuery } from '../../status/query.js';
import { taskReads } from './reads.js';
import type { TaskRecord } from '../records.js';
import { settle } from './settle.js';
import { take } from './take.js';
import { callFor } from '../../config/templates.js';

const defined = <T>(value: T | undefined): value is T => value !== undefined;

/**
 * Promise.all that lets every promise settle before it throws the first failure: a document's
 * writes are never left running behind an error that stops the task.
 */
async function whenAll<T>(promises: Array<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return results.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/**
 * One task over its backlog. Each search hit is checked as it is now and admitted, or left
 * waiting for input; admitted documents wait, unclaimed, for one of their ERP system's call
 * slots (`maxConcurrentCalls`), and are claimed only once they have one: a run holds no more
 * claimed-but-unsent documents than it has calls going out, so a crash costs those calls and no
 * more. Then the call, then DONE, RETRY (with back-off) or FAILED is written back. The next page
 * is read while fewer calls wait for a slot than there are slots (CallSlots), so the calls SAP
 * agreed to also set how far the task reads ahead. Each document's record goes to `onRecord` once
 * it is settled; a repository error on one document is that document's outcome. Bad ERP
 * credentials, or an untrusted certificate, stop the task: what was claimed is released, nothing
 * more is claimed.
 */
export async function runTask(task: TaskConfig, deps: TaskDeps, onRecord: (record: TaskRecord) => void): Promise<void> {
  const taskCall = callFor(task);
  const ctx: TaskContext = { task, call: taskCall.call, deps, onRecord, now: deps.now ?? (() => new Date()) };
  // A document is admitted only for a system with a port for the task's transport (admit.ts), so each lookup finds one.
  const adapter = (system: string): CallAdapter => {
    if (taskCall.transport === 'RFC') {
      const { dateFormat } = deps.system(system).rfc as { dateFormat: DateFormat };
      return rfcCall(taskCall.call, deps.erpFor(system, 'RFC') as ErpPort<RfcRequest>, dateFormat);
    }
    const download = (doc: RepositoryDocument) => deps.client.downloadBlob(doc.uid);
    return restCall(taskCall.call, deps.erpFor(system, 'Rest') as ErpPort<RestRequest>, download);
  };
  const refusal = new AbortController();
  // Refused credentials stop the reading too: no further page is read, admitted or written to.
  const stop = AbortSignal.any([deps.stop, refusal.signal]);
  const slots = new CallSlots((system) => deps.system(system).maxConcurrentCalls, stop);
  const seen = new Set<string>();
  const found = async function* found(): AsyncGenerator<RepositoryDocument[]> {
    for await (const page of drain(
      deps.client,
      `${taskQuery(task, ctx.now())}${deps.shard}`,
      task.batchSize,
      stop,
      taskReads(task, taskCall.call),
      deps.found,
    )) {
      for (const doc of page) seen.add(doc.uid);
      yield page.filter((doc) => !deps.settledBefore.has(doc.uid));
    }
  };
  const added = async function* added(): AsyncGenerator<RepositoryDocument[]> {
    // A page under way during the last round may have labelled a document that round's search found and settled.
    const labelled = deps.labelled.filter((doc) => !deps.settledBefore.has(doc.uid));
    for await (const page of labelledPages(task, labelled, deps.client, seen, stop)) {
      deps.found(page.length);
      yield page;
    }
  };
  const pages = concat(found(), added());
  // Pages being handed over: their calls are not waiting for a slot yet, but will be.
  const handing = new Set<Promise<unknown>>();
  const room = async (): Promise<void> => {
    await Promise.allSettled(handing);
    await slots.room();
  };
  // A call that takes a table (bar codes) sends a page's documents of a system together.
  const table = batches(taskCall.call.parameters);
  // What one page can add to a system's waiting calls: a system alone never has more waiting than its slots and this.
  const pageSlack = table ? 1 : task.batchSize;
  /**
   * Admits a page's documents and starts their calls, which then wait for their slots: resolves
   * with them. A call to a system that has its slots' and a page's worth waiting already (a slow
   * one, while the reading goes on for the others) is left unclaimed for the next run.
   */
  const handOver = async (page: RepositoryDocument[]): Promise<Array<Promise<void>>> => {
    const admitted = (await whenAll(page.map((doc) => admit(ctx, doc)))).filter(defined);
    return bySystem(admitted).flatMap(([system, items]) =>
      units(table, items).map(async (unit) => {
        if (!slots.full(system, pageSlack)) return send(ctx, adapter(system), slots, system, unit, refusal);
        released(
          ctx,
          unit,
          `left for the next run: ERP system ${system} has more calls waiting than its slots and a page`,
        );
      }),
    );
  };
  await eachPage(pages, room, async (page) => {
    const handed = handOver(page);
    handing.add(handed);
    await whenAll(await handed.finally(() => handing.delete(handed)));
    // Refused credentials stop the task once the page's documents are settled or released.
    if (refusal.signal.aborted) throw refusal.signal.reason;
  });
}

function bySystem(items: Admitted[]): Array<[string, Admitted[]]> {
  const groups = new Map<string, Admitted[]>();
  for (const item of items) {
    const system = String(item.doc.properties['erpHttpContent:source']);
    const group = groups.get(system);
    if (group) group.push(item);
    else groups.set(system, [item]);
  }
  return [...groups];
}

/** What goes out in one call: the page's documents of a system together for a call that takes a table (bar codes), one each otherwise. */
const units = (table: boolean, items: Admitted[]): Admitted[][] => (table ? [items] : items.map((item) => [item]));

/** Documents never claimed, as the intake or an earlier run left them: for the next run. */
function released(ctx: TaskContext, unit: Admitted[], message: string): void {
  for (const { doc } of unit) ctx.onRecord({ ...base(ctx, doc), result: 'RELEASED', message });
}

/**
 * One call's documents: a slot, then the claims, then the call; the outcomes are written once
 * the slot is free again. Documents still waiting for a slot when the run stops were never
 * claimed: they are reported RELEASED and nothing is written.
 */
async function send(
  ctx: TaskContext,
  adapter: CallAdapter,
  slots: CallSlots,
  system: string,
  unit: Admitted[],
  refusal: AbortController,
): Promise<void> {
  const what =
    unit.length === 1 ? `${adapter.name} for ${unit[0].doc.path}` : `${adapter.name} for ${unit.length} documents`;
  let sent: { claimed: Admitted[]; outcomes: CallOutcome[] };
  try {
    sent = await slots.run(system, what, async () => {
      const claimed = (
        await whenAll(
          unit.map(async (item) => {
            const doc = await take(ctx, item.doc);
            return doc && { ...item, doc };
          }),
        )
      ).filter(defined);
      return { claimed, outcomes: await Promise.all(execute(adapter, claimed)) };
    });
  } catch (error) {
    if (!(error instanceof NotSentError)) throw error;
    released(ctx, unit, error.message);
    return;
  }
  await whenAll(
    sent.claimed.map(async ({ doc }, i) => {
      const outcome = sent.outcomes[i];
      if (outcome.error instanceof AuthenticationError) refusal.abort(outcome.error);
      ctx.onRecord(await settle(ctx, doc, outcome));
    }),
  );
}
