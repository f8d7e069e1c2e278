import { EXIT } from '../../exit-codes.js';
import type { LaneDeps } from '../lanes/context.js';
import { finish, newTally, taskSummary, type RunReport, type Tally } from '../report/report.js';
import type { Repository } from './connect.js';
import type { Ended } from './end.js';
import type { Prepared } from './prepare.js';

/** What each stage of a run returned, as far as the run got: the report is made from it alone. */
export interface StageResults {
  prepared?: Prepared;
  repository?: Repository;
  deps?: LaneDeps;
  /** The sources' and lanes' counts and records, kept as documents settle. */
  tally?: Tally;
  ended?: Ended;
}

/** How the run ended, as its frame (run.ts) saw it. */
export interface Ending {
  /** What ended the run before its work was done: a signal, the --limit, an error. */
  endedBy?: string;
  /** A signal or --max-duration stopped it; the grace period ran out or not. */
  interrupted?: { reason: string; graceExpired: boolean };
  /** Configuration problems and refused credentials that stopped it. */
  problems: string[];
  /** Any other error that stopped it (the repository down, say). */
  failure?: string;
}

/**
 * The last stage: the report, made from what the stages returned and how the run ended. A task an
 * outage stopped is reported stopped with the outage as its reason; claims still held when a stop
 * cut the run short are listed, for a later run takes them over.
 */
export function runReport(
  run: { runId: string; dryRun: boolean; startedAt: string },
  results: StageResults,
  ending: Ending,
): RunReport {
  const { prepared, repository, deps, ended } = results;
  const tally =
    results.tally ??
    newTally(
      run.dryRun,
      prepared?.tasks.map((task) => task.name),
    );
  for (const { task, reason } of ended?.stopped ?? [])
    Object.assign(taskSummary(tally, task), { state: 'stopped', reason });
  const told = repository?.mapping.told;
  const report: RunReport = {
    ...run,
    ...prepared?.about,
    ...(told?.mappingFile && { mappingFile: told.mappingFile }),
    ...(ending.interrupted && { interrupted: { ...ending.interrupted, leftClaimed: deps?.claims.inFlight() ?? [] } }),
    warnings: told?.warnings ?? [],
    ...(ending.failure !== undefined && { failure: ending.failure }),
    problems: [...(told?.problems ?? []), ...ending.problems],
    outages: ended?.outages ?? [],
    intake: tally.intake,
    tasks: tally.tasks,
    plannedCalls: repository?.ports.plannedCalls ?? [],
    exitCode: ending.failure === undefined ? EXIT.ok : EXIT.documentsFailed,
  };
  return finish(report, ending.endedBy);
}
