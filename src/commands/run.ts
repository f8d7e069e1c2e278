import { writeFileSync } from 'node:fs';
import type { ConfigLocation } from '../config/load.js';
import type { Logger } from '../log.js';
import { renderHtml } from '../report/html.js';
import { ReportFile } from '../report/report-file.js';
import type { RunReport } from '../report/report.js';
import { renderReport } from '../report/table.js';
import { runJob } from '../run.js';

export interface RunCommandOptions {
  location: Required<ConfigLocation>;
  dryRun: boolean;
  task?: string;
  /** Stop claiming after this long, as on SIGTERM. */
  maxDurationMs?: number;
  graceMs?: number;
  report?: string;
  reportHtml?: string;
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

function writeReports(report: RunReport, file: ReportFile | undefined, options: RunCommandOptions): void {
  file?.write(report);
  if (options.reportHtml !== undefined) writeFileSync(options.reportHtml, renderHtml(report));
}

/**
 * `connect2erp run`: SIGTERM (what Kubernetes and `docker stop` send), Ctrl-C or the end of
 * --max-duration stops the run the same way: nothing more is claimed, in-flight calls get
 * the grace period, the report is written and the exit code is 3.
 */
export async function runCommand(options: RunCommandOptions, log: Logger): Promise<number> {
  const stop = new AbortController();
  // Kept for the whole run: a second signal is not the default "terminate now" while the run winds down.
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) log.warn('already stopping', { signal });
    else stop.abort(signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  const deadline = options.maxDurationMs === undefined ? undefined : setTimeout(() => stop.abort('--max-duration'), options.maxDurationMs);
  try {
    const file = options.report === undefined ? undefined : new ReportFile(options.report);
    const onDocument = file && ((phase: string, record: object) => file.add(phase, record));
    const report = await runJob({ location: options.location, dryRun: options.dryRun, task: options.task, stop: stop.signal, graceMs: options.graceMs, onDocument }, log);
    writeReports(report, file, options);
    process.stdout.write(`${renderReport(report)}\n`);
    // Calls still in flight after the grace period would keep the process alive: it exits
    // now, like a crash at that point, and a later run takes their claims over.
    if (report.interrupted?.graceExpired) setTimeout(() => process.exit(report.exitCode), 100).unref();
    return report.exitCode;
  } finally {
    clearTimeout(deadline);
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}
