import { randomUUID } from 'node:crypto';
import { ConfigError, AuthenticationError, errorMessage, formatProblem } from '../../common/errors.js';
import { EXIT } from '../exit-codes.js';
import type { Logger } from '../log.js';
import { withinGrace } from '../stop.js';
import type { Claims } from './claims/claims.js';
import type { LaneDeps } from './lanes/context.js';
import { InHand } from './lanes/in-hand.js';
import { Lanes } from './lanes/lanes.js';
import { SendBudget } from './lanes/send-budget.js';
import { BatchLog } from './report/batch-log.js';
import { taskPhase } from './report/report-file.js';
import { finish, newReport, recordTask, type RunReport } from './report/report.js';
import type { RunOptions } from './run-options.js';
import { connect } from './stages/connect.js';
import { settleRun } from './stages/end.js';
import { prepare, type Prepared } from './stages/prepare.js';
import { runSources } from './stages/sources.js';

export type { RunOptions } from './run-options.js';

export const DEFAULT_GRACE_MS = 20_000;

/**
 * One run: load and validate, read the mapping file, then the sources hand documents to the
 * lanes, which send them (see work), and the report. Once `stop` fires, in-flight work gets
 * `graceMs` to finish; whatever is still claimed after that is listed in the report and taken
 * over by a later run.
 */
export async function runJob(options: RunOptions, baseLog: Logger): Promise<RunReport> {
  const report = newReport(randomUUID(), options.dryRun);
  const log = baseLog.child({ runId: report.runId });
  // A signal of the run's own when none is given: the ERP clients listen on it for the run's lifetime.
  const stop = options.stop ?? new AbortController().signal;
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  // The run's claims, once the repository is known: what a run cut short leaves claimed is listed from them.
  const held: { claims?: Claims } = {};
  const onStop = (): void => void log.warn('run stopping', { reason: String(stop.reason), graceMs });
  stop.addEventListener('abort', onStop, { once: true });
  const shard = options.shard === undefined ? undefined : `${options.shard.index + 1}/${options.shard.count}`;
  log.info('run started', { dryRun: options.dryRun, shard, doc: options.doc, limit: options.limit });
  const budget = new SendBudget(options.limit);
  let endedBy: string | undefined;
  try {
    const finished = await withinGrace(work(options, report, log, stop, held, budget), stop, graceMs);
    if (stop.aborted) {
      report.interrupted = {
        reason: String(stop.reason),
        graceExpired: !finished,
        leftClaimed: held.claims?.inFlight() ?? [],
      };
      endedBy = finished ? String(stop.reason) : `${String(stop.reason)}; the grace period ran out`;
    } else if (budget.spent.aborted) endedBy = budget.reason;
  } catch (error) {
    endedBy = error instanceof ConfigError ? 'a configuration problem' : errorMessage(error);
    if (error instanceof ConfigError) report.problems.push(...error.problems.map(formatProblem));
    else if (error instanceof AuthenticationError) report.problems.push(error.message);
    else {
      report.failure = endedBy;
      report.exitCode = EXIT.documentsFailed;
    }
    // Refused credentials, an untrusted certificate, a configuration problem: what alerting must see.
    log.error('run stopped', { reason: errorMessage(error) });
  }
  stop.removeEventListener('abort', onStop);
  finish(report, endedBy);
  log.info('run finished', { exitCode: report.exitCode, ...report.intake.counts, problems: report.problems.length });
  return report;
}

/**
 * The stages of a run, each a function returning what the next works with: prepare (the
 * configuration), connect (the ports, the mapping file, the claims), the sources handing documents
 * to the lanes, which claim, call and settle them (lanes/lane.ts; a document is held by one lane at
 * a time, InHand), and the end, whatever stopped the sources. An SAP system's outage stops its
 * lanes only.
 */
async function work(
  options: RunOptions,
  report: RunReport,
  log: Logger,
  stop: AbortSignal,
  held: { claims?: Claims },
  budget: SendBudget,
): Promise<void> {
  const prepared = prepare(options, report, log);
  const connected = await connect(prepared, options, report, log, stop, budget);
  if (connected === undefined) return;
  const { deps } = connected;
  held.claims = deps.claims;
  const { lanes, inHand, batches } = wire(prepared, deps, options, report);
  // A source that fails halts the others: nothing goes on behind the run's report.
  const halt = new AbortController();
  const reading = AbortSignal.any([stop, lanes.halted, halt.signal, budget.spent]);
  const run = {
    options,
    report,
    config: prepared.config,
    deps,
    lanes,
    inHand,
    reading,
    halt: (e: unknown) => halt.abort(e),
  };
  try {
    await runSources(run, connected.mapping);
  } finally {
    await settleRun(lanes, deps.claims, [...batches.values()], report, log);
  }
  await lanes.drained();
}

/** The lanes of the run's tasks, each record they make going to the report, its task's batch log and InHand. */
function wire({ config, tasks }: Prepared, deps: LaneDeps, options: RunOptions, report: RunReport) {
  const inHand = new InHand(config.storage.intakeRoundSize);
  const sink = options.onDocument ?? (() => undefined);
  const batches = new Map(
    tasks.map((task) => [task.name, new BatchLog(deps.log, 'documents settled', { task: task.name }, task.batchSize)]),
  );
  const lanes = new Lanes(deps, tasks, (task, record) => {
    sink(taskPhase(task.name), recordTask(report, record));
    batches.get(task.name)?.add(record.result);
    inHand.done(record.uid);
  });
  return { lanes, inHand, batches };
}
