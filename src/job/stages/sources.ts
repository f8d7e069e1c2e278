import type { Config } from '../../config/load.js';
import { fieldLimits } from '../../config/field-limits.js';
import type { UseCase } from '../../config/task-schema.js';
import { callFor } from '../../config/templates.js';
import { folderChainProbe } from '../intake/folder-chain.js';
import type { MappingFile } from '../intake/mapping-schema.js';
import type { LaneDeps } from '../lanes/context.js';
import type { InHand } from '../lanes/in-hand.js';
import type { Lanes } from '../lanes/lanes.js';
import { INTAKE, taskPhase } from '../report/report-file.js';
import { taskSummary, type Phase, type Tally } from '../report/report.js';
import type { RunRecords } from '../run-records.js';
import type { RunObserver } from '../run-observer.js';
import type { RunOptions } from '../run-options.js';
import type { RunSignals } from '../run-signals.js';
import { claimAtLabel } from '../sources/claim-at-label.js';
import { dueSource } from '../sources/due.js';
import { intakeSource } from '../sources/intake.js';
import { LabelledFeed } from '../sources/labelled-feed.js';
import { taskReads } from '../sources/reads.js';
import { whenAll } from '../when-all.js';

/** What the sources of a run work with. */
export interface Sources {
  options: RunOptions;
  /** The intake's and each task's counts (what this stage leaves for the report), kept as its phases go. */
  tally: Tally;
  /** Where each document's record goes. */
  records: RunRecords;
  config: Config;
  deps: LaneDeps;
  lanes: Lanes;
  inHand: InHand;
  /** `reading` fires when no source may read on; a source that fails ends it for the others. */
  signals: RunSignals;
  observer: RunObserver;
}

/**
 * The third stage: the sources hand documents to the lanes — the intake what it labels READY, as it
 * labels it (skipped when the mapping file cannot be used), then each task's search for its due
 * documents. Resolves once every source has ended and each task's lanes are settled.
 */
export async function runSources(run: Sources, mapping: MappingFile | undefined): Promise<void> {
  if (mapping === undefined) {
    run.tally.intake.state = 'skipped';
    run.tally.intake.reason = 'the mapping file cannot be used (see the problems); the tasks run on';
  } else await labelNew(run, mapping);
  await sendDue(run);
}

/** The intake: new files labelled, each READY one handed to its tasks' lanes as it is. */
async function labelNew(run: Sources, mapping: MappingFile): Promise<void> {
  const { options, tally, config, deps, lanes, inHand, observer } = run;
  const reading = run.signals.reading;
  const tasks = lanes.tasks.map((task) => task.task);
  const alsoReads = (useCase: UseCase): string[] =>
    tasks
      .filter((task) => task.useCase === useCase)
      .flatMap((task) => taskReads(task, callFor(task).call, config.erp.systems));
  const feed = new LabelledFeed(lanes.tasks, inHand, deps.client, reading, (task, count) =>
    observer.found(taskPhase(task.task.name), count),
  );
  const intakeDeps = {
    client: deps.client,
    writer: deps.writer,
    log: deps.log,
    claims: deps.claims,
    claimTimeoutMs: config.storage.intakeClaimTimeoutMs,
    pageSize: config.storage.pageSize,
    stop: reading,
    alsoReads,
    limits: fieldLimits(config.tasks),
    found: intakeCounted(mapping.mapping.length, observer),
    scope: deps.scope,
    folderChain: folderChainProbe(deps.client, deps.log),
    claimAtLabel: options.dryRun || deps.budget.limit !== undefined ? undefined : claimAtLabel(lanes.tasks),
  };
  const intake = (): Promise<void> =>
    intakeSource(mapping, intakeDeps, feed, inHand, run.records).catch((error: unknown) => {
      run.signals.endReading(error);
      throw error;
    });
  try {
    await timed(tally.intake, reading, intake);
  } finally {
    run.records.intakeEnded();
  }
}

/** The intake's searches, one per mapping entry, each telling its count; the last one settles the intake's backlog. */
function intakeCounted(entries: number, observer: RunObserver): (count: number) => void {
  let told = 0;
  return (count) => {
    observer.found(INTAKE, count);
    if (++told === entries) observer.settled(INTAKE);
  };
}

/** Each task's search for its due documents, and its lanes settled: a phase per task, timed from its first document. */
async function sendDue(run: Sources): Promise<void> {
  const { tally, deps, lanes, inHand, signals, observer } = run;
  const source = { client: deps.client, inHand, scope: deps.scope, signals };
  await whenAll(
    // A task the run stopped before, with nothing handed to it, never ran.
    lanes.tasks
      .filter((task) => !deps.stop.aborted || task.startedAt !== undefined)
      .map((task) => {
        // The intake has ended: the due search's count is the last this task will hear.
        const found = (count: number): void => {
          observer.found(taskPhase(task.task.name), count);
          observer.settled(taskPhase(task.task.name));
        };
        const phase = async (): Promise<void> => {
          await dueSource(task, { ...source, found }).catch((error: unknown) => {
            signals.endReading(error);
            throw error;
          });
          await task.drained();
        };
        return timed(taskSummary(tally, task.task.name), signals.reading, phase, task.startedAt);
      }),
  );
}

/**
 * One phase of the run, timed from `since` (a task: the first document the intake handed it, when
 * earlier). It is `stopped` until it ends: an error, or the grace period running out, leaves it
 * so; it is `finished` when it ends before any stop (a signal, or a lane's failure of the run's scope).
 */
async function timed(phase: Phase, stop: AbortSignal, work: () => Promise<void>, since?: number): Promise<void> {
  const started = since ?? performance.now();
  phase.state = 'stopped';
  await work();
  phase.state = stop.aborted ? 'stopped' : 'finished';
  phase.durationMs += Math.round(performance.now() - started);
}
