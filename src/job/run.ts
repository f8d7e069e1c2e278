import { randomUUID } from 'node:crypto';
import { ConfigError, AuthenticationError, errorMessage, formatProblem } from '../../common/errors.js';
import type { Logger } from '../log.js';
import { withinGrace } from '../stop.js';
import type { LaneDeps } from './lanes/context.js';
import { InHand } from './lanes/in-hand.js';
import { Lanes } from './lanes/lanes.js';
import { SendBudget } from './lanes/send-budget.js';
import { BatchLog } from './report/batch-log.js';
import { INTAKE } from './report/report-file.js';
import { newTally, type RunReport, type Tally } from './report/report.js';
import { RunRecords } from './run-records.js';
import { observerOf, type RunObserver } from './run-observer.js';
import type { RunOptions } from './run-options.js';
import { RunSignals } from './run-signals.js';
import { connectErp, connectRepository } from './stages/connect.js';
import { settleRun } from './stages/end.js';
import { prepare, type Prepared } from './stages/prepare.js';
import { runReport, type Ending, type StageResults } from './stages/report.js';
import { runSources } from './stages/sources.js';

export type { RunOptions } from './run-options.js';

export const DEFAULT_GRACE_MS = 20_000;

/** What a run is, for its stages: its options, identity, log, signals, budget and observer. */
interface RunFrame {
  options: RunOptions;
  runId: string;
  log: Logger;
  signals: RunSignals;
  budget: SendBudget;
  observer: RunObserver;
}

/**
 * One run: its stages (see work), then the report made from what they returned. Once `stop`
 * fires, in-flight work gets `graceMs` to finish; whatever is still claimed after that is listed
 * in the report and taken over by a later run.
 */
export async function runJob(options: RunOptions, baseLog: Logger): Promise<RunReport> {
  const runId = randomUUID();
  const startedAt = new Date().toISOString();
  const log = baseLog.child({ runId });
  // A signal of the run's own when none is given: the ERP clients listen on it for the run's lifetime.
  const signals = new RunSignals(options.stop ?? new AbortController().signal);
  const { stop } = signals;
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const onStop = (): void => void log.warn('run stopping', { reason: String(stop.reason), graceMs });
  stop.addEventListener('abort', onStop, { once: true });
  const shard = options.shard === undefined ? undefined : `${options.shard.index + 1}/${options.shard.count}`;
  log.info('run started', { dryRun: options.dryRun, shard, doc: options.doc, limit: options.limit });
  const frame: RunFrame = {
    options,
    runId,
    log,
    signals,
    budget: new SendBudget(options.limit, signals),
    observer: observerOf(options.observer),
  };
  const results: StageResults = {};
  const ending = await ended(work(frame, results), frame, graceMs);
  stop.removeEventListener('abort', onStop);
  const report = runReport({ runId, dryRun: options.dryRun, startedAt }, results, ending);
  log.info('run finished', { exitCode: report.exitCode, ...report.intake.counts, problems: report.problems.length });
  return report;
}

/** How the stages ended: all done, cut short by a stop or the --limit, or stopped by an error. */
async function ended(work: Promise<void>, { signals, budget, log }: RunFrame, graceMs: number): Promise<Ending> {
  const { stop } = signals;
  try {
    const finished = await withinGrace(work, stop, graceMs);
    if (stop.aborted) {
      const reason = String(stop.reason);
      return {
        interrupted: { reason, graceExpired: !finished },
        endedBy: finished ? reason : `${reason}; the grace period ran out`,
        problems: [],
      };
    }
    return { endedBy: budget.spent ? budget.reason : undefined, problems: [] };
  } catch (error) {
    // Refused credentials, an untrusted certificate, a configuration problem: what alerting must see.
    log.error('run stopped', { reason: errorMessage(error) });
    if (error instanceof ConfigError)
      return { endedBy: 'a configuration problem', problems: error.problems.map(formatProblem) };
    if (error instanceof AuthenticationError) return { endedBy: error.message, problems: [error.message] };
    return { endedBy: errorMessage(error), problems: [], failure: errorMessage(error) };
  }
}

/**
 * The stages of a run, each a function returning what the next works with, and what the report
 * is made of (`results`): prepare (the configuration), connect (the repository, its ports and the
 * mapping file; then the ERP ports and the claims), the sources handing documents to the lanes,
 * which claim, call and settle them (lanes/lane.ts; a document is held by one lane at a time,
 * InHand), and the end, whatever stopped the sources. An SAP system's outage stops its lanes only.
 */
async function work(frame: RunFrame, results: StageResults): Promise<void> {
  const { options, log, signals, observer } = frame;
  const prepared = (results.prepared = prepare(options, log));
  if (signals.stop.aborted) return;
  const repository = (results.repository = await connectRepository(prepared, options.dryRun, log));
  if (signals.stop.aborted) return;
  const deps = (results.deps = await connectErp(prepared, repository, frame));
  const tally = (results.tally = newTally(
    options.dryRun,
    prepared.tasks.map((task) => task.name),
  ));
  const { lanes, inHand, records } = wire(prepared, deps, frame, tally);
  try {
    const run = { options, tally, records, config: prepared.config, deps, lanes, inHand, signals, observer };
    await runSources(run, repository.mapping.loaded?.mapping);
  } finally {
    results.ended = await settleRun(lanes, deps.claims, records, log);
  }
  await lanes.drained();
}

/** The lanes of the run's tasks, and where every record goes: the tally, the observer, the batch logs, InHand. */
function wire({ config, tasks }: Prepared, deps: LaneDeps, { signals, observer }: RunFrame, tally: Tally) {
  const inHand = new InHand(config.storage.intakeRoundSize);
  const batches = {
    intake: new BatchLog(deps.log, 'documents labelled', { phase: INTAKE }, config.storage.pageSize),
    tasks: new Map(
      tasks.map((task) => [
        task.name,
        new BatchLog(deps.log, 'documents settled', { task: task.name }, task.batchSize),
      ]),
    ),
  };
  const records = new RunRecords(tally, observer, inHand, batches);
  return { lanes: new Lanes(deps, tasks, signals, records), inHand, records };
}
