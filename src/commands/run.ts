import { rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DURATION_HINT, parseDuration } from '../config/duration.js';
import type { ConfigLocation } from '../config/location.js';
import { ConfigError, errorMessage, type ConfigProblem } from '../../common/errors.js';
import { createLogger, registerSecret, type Logger } from '../log.js';
import { withoutCredentials } from '../http-options.js';
import { ProgressLine } from './progress-line.js';
import { ReportFile, ReportNotWritten } from '../job/report/report-file.js';
import { replaceFile, writeAll } from '../job/report/replace-file.js';
import { EXIT } from '../exit-codes.js';
import type { RunReport } from '../job/report/report.js';
import { renderReport } from '../job/report/table.js';
import { runJob } from '../job/run.js';
import { shardOf, type Shard } from '../job/shard.js';
import { DOCUMENT_ID } from '../job/scope.js';
import { firstOnly, type StopSignals } from '../signals.js';
import { LOCATION, location, TASK, type Command } from './command.js';

interface RunCommandOptions {
  location: Required<ConfigLocation>;
  dryRun: boolean;
  task?: string;
  /** Stop claiming after this long (`25m`), as on SIGTERM. */
  maxDuration?: string;
  /** How long calls under way may finish once the run stops (`20s`). */
  grace?: string;
  report?: string;
  reportHtml?: string;
  /** A Prometheus Pushgateway the run's metrics go to when it ends. */
  metricsPush?: string;
  /** `k/n`: the run's shard (else Kubernetes' Indexed Job, shard.ts). */
  shard?: string;
  /** At most this many documents go to SAP: a pilot. */
  limit?: string;
  /** Only this document. */
  doc?: string;
}

/** A duration option in milliseconds; a bad one is a configuration problem. */
function durationOption(option: string, text: string | undefined, problems: ConfigProblem[]): number | undefined {
  if (text === undefined) return undefined;
  const value = parseDuration(text);
  if (value === undefined)
    problems.push({ file: 'command line', path: `--${option}`, message: `"${text}" is not ${DURATION_HINT}` });
  return value;
}

/**
 * A report path is written at the end of the run; it is checked before any work by writing a
 * probe file beside it, so that a missing folder or a read-only file system (a Kubernetes pod's
 * root) stops the run before it labels or links anything.
 */
function checkReportPath(option: string, path: string | undefined, problems: ConfigProblem[]): void {
  if (path === undefined) return;
  const problem = (message: string): void => void problems.push({ file: 'command line', path: `--${option}`, message });
  const folder = dirname(resolve(path));
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory())
    return problem(`${folder} is not an existing folder`);
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) return problem(`${path} is a folder; give a file name`);
  const probe = join(folder, `.connect2erp-probe-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    problem(`cannot write in ${folder} (${(error as NodeJS.ErrnoException).code})`);
  }
}

function limitOption(text: string | undefined, problems: ConfigProblem[]): number | undefined {
  if (text === undefined) return undefined;
  if (/^[1-9]\d{0,8}$/.test(text)) return Number(text);
  problems.push({
    file: 'command line',
    path: '--limit',
    message: `"${text}" is not a number of documents (1 or more)`,
  });
  return undefined;
}

function docOption(text: string | undefined, problems: ConfigProblem[]): string | undefined {
  if (text === undefined || DOCUMENT_ID.test(text)) return text;
  problems.push({
    file: 'command line',
    path: '--doc',
    message: `"${text}" is not a document's uid (the repository's id, 8-4-4-4-12 lower-case hex digits)`,
  });
  return undefined;
}

function shardOption(option: string | undefined, problems: ConfigProblem[]): Shard | undefined {
  try {
    return shardOf(option);
  } catch (error) {
    problems.push(...(error as ConfigError).problems);
    return undefined;
  }
}

/** The Pushgateway's address: http or https; its password, if it has one, is masked in logs. */
function checkPushUrl(url: string | undefined, problems: ConfigProblem[]): void {
  if (url === undefined) return;
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol)) {
    problems.push({
      file: 'command line',
      path: '--metrics-push',
      message: `"${url}" is not an http:// or https:// URL`,
    });
    return;
  }
  // As the URL's text has it: what a log line that shows the URL would show.
  registerSecret(parsed.password);
}

/** The command line's durations and report paths, every problem at once, before the run starts. */
function checkOptions(options: RunCommandOptions): {
  maxDurationMs?: number;
  graceMs?: number;
  shard?: Shard;
  limit?: number;
  doc?: string;
} {
  const problems: ConfigProblem[] = [];
  const checked = {
    maxDurationMs: durationOption('max-duration', options.maxDuration, problems),
    graceMs: durationOption('grace', options.grace, problems),
    shard: shardOption(options.shard, problems),
    limit: limitOption(options.limit, problems),
    doc: docOption(options.doc, problems),
  };
  checkReportPath('report', options.report, problems);
  checkReportPath('report-html', options.reportHtml, problems);
  // One file for both: the page would overwrite the JSON, silently.
  if (
    options.report !== undefined &&
    options.reportHtml !== undefined &&
    resolve(options.report) === resolve(options.reportHtml)
  )
    problems.push({
      file: 'command line',
      path: '--report-html',
      message: `is the same file as --report (${options.report}): give each report its own`,
    });
  checkPushUrl(options.metricsPush, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return checked;
}

/**
 * The JSON and HTML reports, each on its own: one that cannot be written (a full disk) is a
 * problem of the run (exit 2) named in the other, in the summary and in an error log line, and the
 * last good one stays.
 */
async function writeReports(
  report: RunReport,
  file: ReportFile | undefined,
  options: RunCommandOptions,
  log: Logger,
): Promise<void> {
  /** True when the report was written. */
  const attempt = (path: string, write: () => void): boolean => {
    try {
      write();
      return true;
    } catch (error) {
      const failure = error instanceof ReportNotWritten ? error : new ReportNotWritten(path, errorMessage(error));
      log.error('report not written', { file: failure.file, reason: failure.reason });
      report.problems.push(failure.message);
      report.exitCode = EXIT.configuration;
      return false;
    }
  };
  const page = options.reportHtml;
  const writePage = page === undefined ? () => true : await pageWriter(page, report, attempt);
  // The page first: the JSON report, which monitoring reads, then names a page that could not be
  // written; a JSON report that could not be written is named on the page written again.
  const paged = writePage();
  if (file !== undefined && !attempt(file.path, () => file.write(report)) && paged) writePage();
}

/** Writes the HTML report when called; the renderer is loaded only when a page is asked for. */
async function pageWriter(
  page: string,
  report: RunReport,
  attempt: (path: string, write: () => void) => boolean,
): Promise<() => boolean> {
  const { renderHtml } = await import('../job/report/html.js');
  return () => attempt(page, () => replaceFile(page, (fd) => writeAll(fd, renderHtml(report))));
}

/**
 * Monitoring learns how the run went; a push that fails is logged as an error and changes nothing
 * else: the documents' outcome is the exit code, and the next run pushes again.
 */
async function pushRunMetrics(report: RunReport, url: string, task: string | undefined, log: Logger): Promise<void> {
  try {
    // prom-client is loaded only by a run that pushes.
    const { pushMetrics } = await import('../job/report/metrics.js');
    await pushMetrics(report, url, task);
  } catch (error) {
    log.error('metrics push failed', { url: withoutCredentials(url), error: errorMessage(error) });
  }
}

/**
 * `connect2erp run`: SIGTERM (what Kubernetes and `docker stop` send), Ctrl-C or the end of
 * --max-duration stops the run the same way: nothing more is claimed, in-flight calls get
 * the grace period, the report is written and the exit code is 3. A signal that came while the
 * program was still starting stops the run before its first request.
 */
async function runCommand(options: RunCommandOptions, signals: StopSignals): Promise<number> {
  // On a terminal, a progress line; the log lines, readable there, go around it.
  const progress = process.stderr.isTTY ? new ProgressLine(process.stderr) : undefined;
  const log = createLogger({ stream: progress?.logStream, json: progress === undefined ? undefined : false });
  const stop = new AbortController();
  // A second signal is not the default "terminate now" while the run winds down.
  const again = firstOnly((signal) => log.warn('already stopping', { signal }));
  signals.listen((signal) => (stop.signal.aborted ? again(signal) : stop.abort(signal)));
  const { maxDurationMs, graceMs, shard, limit, doc } = checkOptions(options);
  const deadline =
    maxDurationMs === undefined ? undefined : setTimeout(() => stop.abort('--max-duration'), maxDurationMs);
  try {
    const file = options.report === undefined ? undefined : new ReportFile(options.report);
    const onDocument = (phase: string, record: object): void => {
      file?.add(phase, record);
      progress?.done(phase);
    };
    const report = await runJob(
      {
        location: options.location,
        dryRun: options.dryRun,
        task: options.task,
        stop: stop.signal,
        graceMs,
        observer: {
          document: onDocument,
          ...(progress && {
            found: (phase: string, count: number) => progress.found(phase, count),
            settled: (phase: string) => progress.settle(phase),
          }),
        },
        shard,
        limit,
        doc,
      },
      log,
    );
    progress?.end();
    // The handlers stay until the process exits: a signal while the report is still being written out ends nothing.
    signals.listen(firstOnly((signal) => log.warn('run already finished', { signal })));
    await writeReports(report, file, options, log);
    if (options.metricsPush !== undefined) await pushRunMetrics(report, options.metricsPush, options.task, log);
    process.stdout.write(`${renderReport(report)}\n`);
    // Calls still in flight after the grace period would keep the process alive: it exits
    // now, like a crash at that point, and a later run takes their claims over.
    if (report.interrupted?.graceExpired) setTimeout(() => process.exit(report.exitCode), 100).unref();
    return report.exitCode;
  } finally {
    clearTimeout(deadline);
    progress?.end();
  }
}

export const command: Command = {
  details:
    'On SIGTERM, Ctrl-C or the end of --max-duration: nothing more is claimed, calls under way get\nthe grace period, the rest is released for the next run, the report is written, exit code 3.',
  options: {
    'dry-run': {
      type: 'boolean',
      text: 'read only: report what would be written to the repository and SAP, write nothing',
    },
    task: { ...TASK, text: 'only this task (the intake always runs)' },
    report: { type: 'string', value: 'FILE', text: "write the JSON report, with every document's record, to FILE" },
    'report-html': { type: 'string', value: 'FILE', text: 'write the HTML report to FILE' },
    'max-duration': { type: 'string', value: 'D', text: 'stop claiming after D (90s, 25m, 1h), as on SIGTERM' },
    grace: { type: 'string', value: 'D', text: 'how long calls under way may finish once the run stops (default 20s)' },
    shard: {
      type: 'string',
      value: 'K/N',
      text: "only the K-th of N disjoint parts of the documents, for N runs side by side (default: an Indexed Job's JOB_COMPLETION_INDEX of CONNECT2ERP_SHARDS)",
    },
    limit: {
      type: 'string',
      value: 'N',
      text: 'a pilot: send at most N documents to SAP, then stop reading (the rest waits for the next run)',
    },
    doc: { type: 'string', value: 'UID', text: 'only this document: label it if it is new, send it if it is ready' },
    'metrics-push': {
      type: 'string',
      value: 'URL',
      text: "push the run's counts and durations to this Prometheus Pushgateway when it ends",
    },
    ...LOCATION,
  },
  windsDown: true,
  run: ({ strings, flags, signals }) =>
    runCommand(
      {
        location: location(strings),
        dryRun: flags['dry-run'],
        task: strings.task,
        report: strings.report,
        reportHtml: strings['report-html'],
        maxDuration: strings['max-duration'],
        grace: strings.grace,
        metricsPush: strings['metrics-push'],
        shard: strings.shard,
        limit: strings.limit,
        doc: strings.doc,
      },
      signals,
    ),
};
