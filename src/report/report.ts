import type { IntakeOutcome } from '../intake/apply.js';
import type { PlannedCall } from '../erp/port.js';
import type { ClaimedDocument, TaskRecord } from '../tasks/run-task.js';

export const EXIT = { ok: 0, documentsFailed: 1, configuration: 2, interrupted: 3 } as const;

/** What each exit code means, for the usage text and the HTML report. */
export const EXIT_MEANING: Record<number, string> = {
  [EXIT.ok]: 'success',
  [EXIT.documentsFailed]: 'some documents failed',
  [EXIT.configuration]: 'configuration error',
  [EXIT.interrupted]: 'interrupted',
};

export interface IntakeRecord {
  uid: string;
  path: string;
  mapping: string;
  useCase: string;
  result: 'labelled' | 'planned' | 'skipped' | 'error';
  status?: string;
  facets: string[];
  values: Record<string, unknown>;
  folder?: string;
  missing: string[];
  error?: string;
  transient?: boolean;
  /** Why another run (or a user) was left to label it. */
  skipped?: string;
}

export interface RunReport {
  runId: string;
  dryRun: boolean;
  startedAt: string;
  finishedAt?: string;
  /** The repository's base URL, for links to its documents. */
  repositoryUrl?: string;
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
  /** Configuration problems that stopped the run. */
  problems: string[];
  intake: {
    counts: { labelled: number; planned: number; ready: number; pendingInput: number; skipped: number; errors: number };
    documents: IntakeRecord[];
  };
  /** Per task: how many documents ended in each result, and each document's record. */
  tasks: Record<string, { counts: Record<string, number>; documents: TaskRecord[] }>;
  /** Dry run: the ERP writes that would have been made, with their parameters. */
  plannedCalls: PlannedCall[];
  exitCode: number;
}

export function newReport(runId: string, dryRun: boolean): RunReport {
  return {
    runId, dryRun, startedAt: new Date().toISOString(), warnings: [], problems: [],
    intake: { counts: { labelled: 0, planned: 0, ready: 0, pendingInput: 0, skipped: 0, errors: 0 }, documents: [] },
    tasks: {}, plannedCalls: [], exitCode: EXIT.ok,
  };
}

export function recordIntake(report: RunReport, outcomes: IntakeOutcome[]): void {
  for (const { plan, error, transient, folderPath, skipped } of outcomes) {
    const result = skipped !== undefined ? 'skipped' : error !== undefined ? 'error' : report.dryRun ? 'planned' : 'labelled';
    const labelled = result === 'planned' || result === 'labelled';
    const status = labelled ? String(plan.status['erpTaskStatus:status']) : undefined;
    report.intake.documents.push({
      uid: plan.doc.uid, path: plan.doc.path, mapping: plan.entry.path, useCase: plan.useCase, result, status,
      facets: plan.facets, values: plan.values, folder: folderPath, missing: plan.missing, error, transient, skipped,
    });
    const counts = report.intake.counts;
    if (result === 'error') counts.errors++;
    else if (result === 'skipped') counts.skipped++;
    else {
      counts[result]++;
      if (status === 'READY') counts.ready++;
      else counts.pendingInput++;
    }
  }
}

export function recordTask(report: RunReport, task: string, records: TaskRecord[]): void {
  const counts: Record<string, number> = {};
  for (const record of records) counts[record.result] = (counts[record.result] ?? 0) + 1;
  report.tasks[task] = { counts, documents: records };
}

export function finish(report: RunReport): RunReport {
  report.finishedAt = new Date().toISOString();
  if (report.problems.length > 0) report.exitCode = EXIT.configuration;
  else if (report.interrupted) report.exitCode = EXIT.interrupted;
  else if (report.intake.counts.errors > 0 || Object.values(report.tasks).some((t) => t.counts.FAILED > 0)) report.exitCode = EXIT.documentsFailed;
  return report;
}
