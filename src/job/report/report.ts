import type { PlannedCall } from '../../ports/erp-port.js';
import type { Outage } from '../lanes/system-health.js';
import type { ClaimedDocument, IntakeRecord, TaskRecord } from '../records.js';
import { EXIT } from '../../exit-codes.js';

/**
 * How far a phase of the run got: through its whole backlog, cut short, never begun, or left out
 * while the run went on (the intake, when the mapping file cannot be used). For all but the
 * first, `reason` says why (a signal, --max-duration, the error, the mapping file).
 */
type PhaseState = 'finished' | 'stopped' | 'not run' | 'skipped';

export interface Phase {
  state: PhaseState;
  reason?: string;
  durationMs: number;
}

/** A phase's state as a person reads it; undefined when it finished. */
export function phaseNote(phase: Phase): string | undefined {
  if (phase.state === 'finished') return undefined;
  if (phase.state === 'not run') return `not run: the run ended before it (${String(phase.reason)})`;
  if (phase.state === 'skipped') return `skipped: ${String(phase.reason)}`;
  return `stopped early (${String(phase.reason)}); the rest of its backlog waits for the next run`;
}

/** What a task's document row says: the call a dry run would make with its values, SAP's reference, or the message. */
export function taskDetail(record: TaskRecord): string {
  const { planned } = record;
  if (planned !== undefined)
    return `${planned.call} ${Object.entries(planned.values)
      .map(([target, value]) => `${target}=${value}`)
      .join(' ')}`;
  return record.reference ?? record.message ?? '';
}

export interface RunReport {
  runId: string;
  dryRun: boolean;
  startedAt: string;
  finishedAt?: string;
  /** The repository's base URL, as the run reached it. */
  repositoryUrl?: string;
  /** Web UI's address for links to documents (storage.yaml's webUiUrl, else the repository's + /ui). */
  webUiUrl?: string;
  /** The SAP systems the run's tasks send to, as a person names them: name, client, address. */
  erpSystems?: string[];
  mappingFile?: { uid: string; path: string; readableBy: string[] };
  /** Set when a signal or --max-duration stopped the run early. */
  interrupted?: {
    reason: string;
    /** In-flight work did not finish within the grace period. */
    graceExpired: boolean;
    /** Claimed and not settled when the run ended: a later run takes them over once their claims expire. */
    leftClaimed: ClaimedDocument[];
  };
  warnings: string[];
  /** What stopped the run when it was neither a signal nor a configuration problem (the repository down, say). */
  failure?: string;
  /** Configuration problems that stopped the run. */
  problems: string[];
  /**
   * SAP systems, or lanes (a task's calls to one system), that stopped in this run: their
   * documents wait for the next run, none charged an attempt.
   */
  outages: Outage[];
  intake: Phase & {
    counts: { labelled: number; planned: number; ready: number; pendingInput: number; skipped: number; errors: number };
    /** The first LISTED_MAX documents' records; `unlisted` counts the others (the JSON report file has them all). */
    documents: IntakeRecord[];
    unlisted: number;
  };
  /** Per task: how many documents ended in each result, records as for the intake, how long it took. */
  tasks: Record<string, TaskSummary>;
  /** Dry run: the ERP writes that would have been made, with their parameters. */
  plannedCalls: PlannedCall[];
  exitCode: number;
}

interface TaskSummary extends Phase {
  counts: Record<string, number>;
  documents: TaskRecord[];
  unlisted: number;
}

/**
 * How many document records a report keeps in memory per phase: a run over any backlog
 * stays within the same memory; every record still reaches the log and the JSON report file.
 */
export const LISTED_MAX = 1000;

/** What the sources and lanes count and list as documents settle: the report's phases. */
export type Tally = Pick<RunReport, 'dryRun' | 'intake' | 'tasks'>;

/** The phases before any document: every task the run runs has its entry, whether it gets to it or not. */
export function newTally(dryRun: boolean, tasks: string[] = []): Tally {
  const tally: Tally = {
    dryRun,
    intake: {
      state: 'not run',
      counts: { labelled: 0, planned: 0, ready: 0, pendingInput: 0, skipped: 0, errors: 0 },
      documents: [],
      unlisted: 0,
      durationMs: 0,
    },
    tasks: {},
  };
  for (const task of tasks) taskSummary(tally, task);
  return tally;
}

export function newReport(runId: string, dryRun: boolean): RunReport {
  const { intake, tasks } = newTally(dryRun);
  return {
    runId,
    dryRun,
    startedAt: new Date().toISOString(),
    warnings: [],
    problems: [],
    outages: [],
    intake,
    tasks,
    plannedCalls: [],
    exitCode: EXIT.ok,
  };
}

function list<T>(phase: { documents: T[]; unlisted: number }, record: T): void {
  if (phase.documents.length < LISTED_MAX) phase.documents.push(record);
  else phase.unlisted++;
}

/**
 * Counts and lists an intake record, and returns it as the report keeps it: in a dry run nothing
 * was written, so what the intake labelled is `planned`.
 */
export function recordIntake(tally: Tally, emitted: IntakeRecord): IntakeRecord {
  const record: IntakeRecord =
    tally.dryRun && emitted.result === 'labelled' ? { ...emitted, result: 'planned' } : emitted;
  list(tally.intake, record);
  const counts = tally.intake.counts;
  if (record.result === 'error') counts.errors++;
  else if (record.result === 'skipped') counts.skipped++;
  else {
    counts[record.result]++;
    if (record.status === 'READY') counts.ready++;
    else counts.pendingInput++;
  }
  return record;
}

/** A task's entry, made before the task begins: a task that never ran, or had nothing to do, is reported too. */
export function taskSummary(tally: Pick<Tally, 'tasks'>, task: string): TaskSummary {
  tally.tasks[task] ??= { state: 'not run', counts: {}, documents: [], unlisted: 0, durationMs: 0 };
  return tally.tasks[task];
}

/**
 * Counts and lists a task record, and returns it as the report keeps it: in a dry run a document
 * whose work SAP already has was not marked DONE, only found so.
 */
export function recordTask(tally: Tally, emitted: TaskRecord): TaskRecord {
  const record: TaskRecord =
    tally.dryRun && emitted.result === 'DONE'
      ? { ...emitted, result: 'PLANNED', message: 'already in SAP: would be marked DONE' }
      : emitted;
  const summary = taskSummary(tally, record.task);
  list(summary, record);
  summary.counts[record.result] = (summary.counts[record.result] ?? 0) + 1;
  return record;
}

/** An outage as a person reads it: what stopped, and why. */
export function outageText(outage: Outage): string {
  const what =
    outage.task === undefined ? `ERP system ${outage.system}` : `task ${outage.task} on ERP system ${outage.system}`;
  return `${what} ${outage.kind === 'refused' ? 'refused' : 'unavailable'}: ${outage.reason}`;
}

/**
 * Every phase that did not finish gets what ended the run as its reason. The exit code: a person
 * must change something first (configuration, or an SAP system refusing the connector), then an
 * SAP system unavailable, then the run interrupted, then documents that failed.
 */
export function finish(report: RunReport, endedBy: string | undefined): RunReport {
  for (const phase of [report.intake, ...Object.values(report.tasks)]) {
    if (phase.state !== 'finished') phase.reason ??= endedBy;
  }
  report.finishedAt = new Date().toISOString();
  if (report.problems.length > 0 || report.outages.some((o) => o.kind === 'refused'))
    report.exitCode = EXIT.configuration;
  else if (report.outages.length > 0) report.exitCode = EXIT.unavailable;
  else if (report.interrupted) report.exitCode = EXIT.interrupted;
  else if (
    report.intake.counts.errors > 0 ||
    Object.values(report.tasks).some((t) => t.counts.FAILED > 0 || t.counts.ERROR > 0)
  )
    report.exitCode = EXIT.documentsFailed;
  return report;
}
