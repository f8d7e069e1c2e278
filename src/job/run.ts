import { systemClock } from '../clock.js';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { loadConfig, selectTasks, type Config } from '../config/load.js';
import { podsOf } from '../config/pods.js';
import type { ConfigLocation } from '../config/location.js';
import { ConfigError, AuthenticationError, errorMessage, formatProblem } from '../../common/errors.js';
import type { UseCase } from '../config/task-schema.js';
import type { Logger } from '../log.js';
import { featureRegistry } from '../../common/nuxeo/schemas.js';
import { RepositoryClient } from '../repository/client.js';
import { portsFor } from '../ports/ports.js';
import { EXIT } from '../exit-codes.js';
import {
  finish,
  newReport,
  outageText,
  recordIntake,
  recordTask,
  taskSummary,
  type Phase,
  type RunReport,
} from './report/report.js';
import type { IntakeRecord, TaskRecord } from './records.js';
import { fieldLimits } from '../config/field-limits.js';
import { callFor } from '../config/templates.js';
import { withinGrace } from '../stop.js';
import { INTAKE, taskPhase } from './report/report-file.js';
import type { Shard } from './shard.js';
import { scopeCondition } from './scope.js';
import { SendBudget } from './lanes/send-budget.js';
import { usableMapping } from './intake/usable-mapping.js';
import { erpPorts } from './erp-ports.js';
import { InHand } from './lanes/in-hand.js';
import { Claims } from './claims/claims.js';
import { claimAtLabel } from './sources/claim-at-label.js';
import { Lanes } from './lanes/lanes.js';
import { dueSource } from './sources/due.js';
import { intakeSource } from './sources/intake.js';
import { folderChainProbe } from './intake/folder-chain.js';
import { LabelledFeed } from './sources/labelled-feed.js';
import type { LaneDeps } from './lanes/context.js';
import type { MappingFile } from './intake/mapping-schema.js';
import { taskReads } from './sources/reads.js';
import { whenAll } from './when-all.js';
import { BatchLog } from './report/batch-log.js';
import { withoutCredentials } from '../http-options.js';

export interface RunOptions {
  location: Required<ConfigLocation>;
  dryRun: boolean;
  /** Only this task (and always the intake). */
  task?: string;
  /** Fires on SIGTERM or when --max-duration runs out; its reason is reported. */
  stop?: AbortSignal;
  /** How long in-flight work may go on once `stop` fires. */
  graceMs?: number;
  /** Every document's record as it is made (the report keeps only the first LISTED_MAX per phase). */
  onDocument?: DocumentSink;
  /** How many documents a phase found to work on, as each of its searches tells (progress). */
  onFound?: (phase: string, count: number) => void;
  /** A phase's backlog is all counted: every search of it has told, and no other source feeds it. */
  onSettled?: (phase: string) => void;
  /** Only this part of the documents, by uuid: one of n pods that share the work (shard.ts). */
  shard?: Shard;
  /** Only this document (its uid): a pilot on one document. */
  doc?: string;
  /** At most this many documents handed to SAP: a pilot (lanes/send-budget.ts). */
  limit?: number;
  /** The clock claims, back-offs and probes are read from: a test moves it on instead of waiting. */
  now?: () => Date;
}

/** Where every document's record goes, by phase (`INTAKE` or `taskPhase(name)`). */
export type DocumentSink = (phase: string, record: IntakeRecord | TaskRecord) => void;

export const DEFAULT_GRACE_MS = 20_000;

/** What listens on a run's stop besides its SAP systems: the run, the grace period, the sources' waits. */
const RUN_LISTENERS = 10;

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
 * The sources (the intake, then each task's search for due documents) hand documents to the
 * lanes, one per task and SAP system, which claim, call and settle them (lanes/lane.ts); a document
 * is held by one lane at a time (InHand). An SAP system's outage stops its lanes only.
 */
async function work(
  options: RunOptions,
  report: RunReport,
  log: Logger,
  stop: AbortSignal,
  held: { claims?: Claims },
  budget: SendBudget,
): Promise<void> {
  const config = loadConfig(options.location, { pods: podsOf(undefined) });
  const tasks = selectTasks(config.tasks, options.task, options.location.jobsDir).filter((t) => t.enabled);
  for (const { file, path, message, task } of config.advice) {
    // Each CronJob tells what concerns its own task, not its neighbours', and what concerns all.
    if (task === undefined || tasks.some((t) => t.name === task))
      log.warn('configuration advice', { file, key: path, advice: message });
  }
  // Every task is reported, whether it runs or not.
  for (const task of tasks) taskSummary(report, task.name);
  report.repositoryUrl = withoutCredentials(config.storage.url);
  report.webUiUrl = config.storage.webUiUrl ?? `${report.repositoryUrl}/ui`;
  report.erpSystems = config.erp.systems
    .filter((system) => tasks.some((task) => (task.systems ?? [system.name]).includes(system.name)))
    .map((system) => {
      const url = system.rfc?.url ?? system.rest?.url;
      return `${system.name} (client ${system.client}, ${withoutCredentials(String(url))})`;
    });
  // Stopped while the program was starting: nothing is read or written.
  if (stop.aborted) return;
  const registry = featureRegistry();
  const client = new RepositoryClient(config.storage, log, registry);
  const { writer, ...ports } = portsFor(options.dryRun, client);
  report.plannedCalls = ports.plannedCalls;
  const loaded = await usableMapping(client, config, registry, report, log);
  if (stop.aborted) return;
  const inHand = new InHand(config.storage.intakeRoundSize);
  const systems = new Map(config.erp.systems.map((system) => [system.name, system]));
  // Each system's RFC and Rest clients and its call slots listen on the stop: more than Node's default of 10 warns about.
  setMaxListeners(RUN_LISTENERS + 3 * systems.size, stop);
  const deps = {
    client,
    writer,
    erpFor: await erpPorts(config.erp.systems, tasks, ports.erp, log, stop),
    // A document naming an unknown system is never admitted (it waits for input), so every lookup finds one.
    system: (name: string) => systems.get(name)!,
    systemNames: [...systems.keys()],
    log,
    runId: report.runId,
    stop,
    claims: new Claims({ client, writer, runId: report.runId, now: options.now ?? systemClock }),
    scope: scopeCondition(options.shard, options.doc),
    budget,
    now: options.now ?? systemClock,
  };
  held.claims = deps.claims;
  const sink = options.onDocument ?? (() => undefined);
  const batches = new Map(
    tasks.map((task) => [task.name, new BatchLog(log, 'documents settled', { task: task.name }, task.batchSize)]),
  );
  const lanes = new Lanes(deps, tasks, (task, record) => {
    sink(taskPhase(task.name), recordTask(report, record));
    batches.get(task.name)?.add(record.result);
    inHand.done(record.uid);
  });
  // A source that fails halts the others: nothing goes on behind the run's report.
  const halt = new AbortController();
  const reading = AbortSignal.any([stop, lanes.halted, halt.signal, budget.spent]);
  const run: Sources = { options, report, config, deps, lanes, inHand, reading, halt: (error) => halt.abort(error) };
  try {
    if (loaded === undefined) {
      report.intake.state = 'skipped';
      report.intake.reason = 'the mapping file cannot be used (see the problems); the tasks run on';
    } else await labelNew(run, loaded.mapping);
    await sendDue(run);
  } finally {
    // Whatever stopped the sources, what the lanes have under way is settled before the run ends.
    await Promise.all(lanes.tasks.map((task) => task.drained()));
    await giveBack(lanes, deps.claims);
    for (const batch of batches.values()) batch.flush();
    reportOutages(report, lanes, log);
  }
  await lanes.drained();
}

/** What the sources of a run work with. */
interface Sources {
  options: RunOptions;
  report: RunReport;
  config: Config;
  deps: LaneDeps;
  lanes: Lanes;
  inHand: InHand;
  /** Fires when no source may read on: the run stops, a source failed, or a lane met a failure of the run's scope. */
  reading: AbortSignal;
  /** A source failed: the others read no further page. */
  halt: (error: unknown) => void;
}

/** The intake: new files labelled, each READY one handed to its tasks' lanes as it is. */
async function labelNew(run: Sources, mapping: MappingFile): Promise<void> {
  const { options, report, config, deps, lanes, inHand, reading } = run;
  const onFound = options.onFound ?? (() => undefined);
  const sink = options.onDocument ?? (() => undefined);
  const tasks = lanes.tasks.map((task) => task.task);
  const alsoReads = (useCase: UseCase): string[] =>
    tasks
      .filter((task) => task.useCase === useCase)
      .flatMap((task) => taskReads(task, callFor(task).call, config.erp.systems));
  const feed = new LabelledFeed(lanes.tasks, inHand, deps.client, reading, (task, count) =>
    onFound(taskPhase(task.task.name), count),
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
    found: intakeCounted(mapping.mapping.length, options),
    scope: deps.scope,
    folderChain: folderChainProbe(deps.client, deps.log),
    claimAtLabel: options.dryRun || deps.budget.limit !== undefined ? undefined : claimAtLabel(lanes.tasks),
  };
  const batch = new BatchLog(deps.log, 'documents labelled', { phase: INTAKE }, config.storage.pageSize);
  const onRecord = (record: IntakeRecord): void => {
    sink(INTAKE, recordIntake(report, record));
    batch.add(record.result === 'labelled' ? String(record.status) : record.result);
  };
  const intake = (): Promise<void> =>
    intakeSource(mapping, intakeDeps, feed, inHand, onRecord).catch((error: unknown) => {
      run.halt(error);
      throw error;
    });
  try {
    await timed(report.intake, reading, intake);
  } finally {
    batch.flush();
  }
}

/** Claims the intake wrote with documents' labels that no lane took (the run stopped reading first): given back. */
async function giveBack(lanes: Lanes, claims: Claims): Promise<void> {
  const left = claims.notTaken();
  await whenAll(
    lanes.tasks.map((task) =>
      task.giveBack(
        left.filter((held) => held.task === task.task.name),
        'claimed as it was labelled and never handed to a lane (the run stopped reading): left for the next run, no attempt charged',
      ),
    ),
  );
}

/** The intake's searches, one per mapping entry, each telling its count; the last one settles the intake's backlog. */
function intakeCounted(entries: number, options: RunOptions): (count: number) => void {
  let told = 0;
  return (count) => {
    options.onFound?.(INTAKE, count);
    if (++told === entries) options.onSettled?.(INTAKE);
  };
}

/** Each task's search for its due documents, and its lanes settled: a phase per task, timed from its first document. */
async function sendDue(run: Sources): Promise<void> {
  const { options, report, deps, lanes, inHand, reading } = run;
  const onFound = options.onFound ?? (() => undefined);
  const source = { client: deps.client, inHand, scope: deps.scope, stop: reading };
  await whenAll(
    // A task the run stopped before, with nothing handed to it, never ran.
    lanes.tasks
      .filter((task) => !deps.stop.aborted || task.startedAt !== undefined)
      .map((task) => {
        // The intake has ended: the due search's count is the last this task will hear.
        const found = (count: number): void => {
          onFound(taskPhase(task.task.name), count);
          options.onSettled?.(taskPhase(task.task.name));
        };
        const phase = async (): Promise<void> => {
          await dueSource(task, { ...source, found }).catch((error: unknown) => {
            run.halt(error);
            throw error;
          });
          await task.drained();
        };
        return timed(taskSummary(report, task.task.name), reading, phase, task.startedAt);
      }),
  );
}

/** The run's outages, each task stopped by one of them, and one line at level error each. */
function reportOutages(report: RunReport, lanes: Lanes, log: Logger): void {
  report.outages = lanes.outages();
  for (const outage of report.outages) log.error('ERP outage', { ...outage });
  for (const task of lanes.tasks) {
    const stoppedBy = report.outages.filter((o) =>
      o.task === undefined
        ? o.transport === task.task.function && task.systems.includes(o.system)
        : o.task === task.task.name,
    );
    if (stoppedBy.length === 0) continue;
    const summary = taskSummary(report, task.task.name);
    summary.state = 'stopped';
    summary.reason = stoppedBy.map(outageText).join('; ');
  }
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
