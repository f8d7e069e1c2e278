import { randomUUID } from 'node:crypto';
import { loadConfig, selectTasks, type Config } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { ConfigError, AuthenticationError, errorMessage, formatProblem } from '../../common/errors.js';
import { loadMapping, type LoadedMapping } from './intake/mapping-file.js';
import { runIntake } from './intake/run-intake.js';
import type { TaskConfig, UseCase } from '../config/task-schema.js';
import type { RepositoryDocument } from '../repository/document.js';
import type { Logger } from '../log.js';
import { featureRegistry, type SchemaRegistry } from '../../common/nuxeo/schemas.js';
import { RepositoryClient } from '../repository/client.js';
import { portsFor, type Ports } from '../ports/ports.js';
import { EXIT } from '../exit-codes.js';
import {
  finish,
  newReport,
  recordIntake,
  recordTask,
  taskSummary,
  type Phase,
  type RunReport,
} from './report/report.js';
import type { ErpSystemConfig } from '../config/erp-schema.js';
import type { ErpPorts, TaskDeps } from './tasks/context.js';
import type { ClaimedDocument, IntakeRecord, TaskRecord } from './records.js';
import { taskReads } from './tasks/reads.js';
import { runTask } from './tasks/run-task.js';
import { callFor } from '../config/templates.js';
import { withinGrace } from '../stop.js';
import { INTAKE, taskPhase } from './report/report-file.js';
import { shardCondition, type Shard } from './shard.js';

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
  /** Only this part of the documents, by uuid: one of n pods that share the work (shard.ts). */
  shard?: Shard;
}

/** Where every document's record goes, by phase (`INTAKE` or `taskPhase(name)`). */
export type DocumentSink = (phase: string, record: IntakeRecord | TaskRecord) => void;

/**
 * One port per system and transport it has a connection for, for the transports the run's tasks
 * use: a client's module (and its HTTP stack) is loaded only then, so a run starts with less.
 */
async function erpPorts(
  systems: ErpSystemConfig[],
  tasks: TaskConfig[],
  port: Ports['erp'],
  log: Logger,
  stop: AbortSignal,
): Promise<TaskDeps['erpFor']> {
  const byTransport: { [T in keyof ErpPorts]: Map<string, ErpPorts[T]> } = { RFC: new Map(), Rest: new Map() };
  const uses = new Set(tasks.map((task) => task.function));
  if (uses.has('RFC')) {
    const { RfcClient } = await import('../erp/rfc-client.js');
    for (const system of systems.filter((s) => s.rfc !== undefined))
      byTransport.RFC.set(system.name, port(new RfcClient({ ...system, rfc: system.rfc! }, log, stop)));
  }
  if (uses.has('Rest')) {
    const { RestClient } = await import('../erp/rest-client.js');
    for (const system of systems.filter((s) => s.rest !== undefined))
      byTransport.Rest.set(system.name, port(new RestClient({ ...system, rest: system.rest! }, log, stop)));
  }
  return <T extends keyof ErpPorts>(name: string, transport: T): ErpPorts[T] | undefined =>
    byTransport[transport].get(name);
}

/**
 * One run: load and validate, read the mapping file, label new documents, process each
 * task, report. Once `stop` fires, in-flight work gets `graceMs` to finish; whatever is
 * still claimed after that is listed in the report and taken over by a later run.
 */
export async function runJob(options: RunOptions, baseLog: Logger): Promise<RunReport> {
  const report = newReport(randomUUID(), options.dryRun);
  const log = baseLog.child({ runId: report.runId });
  // A signal of the run's own when none is given: the ERP clients listen on it for the run's lifetime.
  const stop = options.stop ?? new AbortController().signal;
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const inFlight = new Map<string, ClaimedDocument>();
  const onStop = (): void => {
    log.warn('run stopping', { reason: String(stop.reason), graceMs });
  };
  stop.addEventListener('abort', onStop, { once: true });
  const shard = options.shard === undefined ? undefined : `${options.shard.index + 1}/${options.shard.count}`;
  log.info('run started', { dryRun: options.dryRun, shard });
  let endedBy: string | undefined;
  try {
    const finished = await withinGrace(work(options, report, log, stop, inFlight), stop, graceMs);
    if (stop.aborted) {
      report.interrupted = {
        reason: String(stop.reason),
        graceExpired: !finished,
        leftClaimed: [...inFlight.values()],
      };
      endedBy = finished ? String(stop.reason) : `${String(stop.reason)}; the grace period ran out`;
    }
  } catch (error) {
    endedBy = error instanceof ConfigError ? 'a configuration problem' : errorMessage(error);
    if (error instanceof ConfigError) report.problems.push(...error.problems.map(formatProblem));
    else if (error instanceof AuthenticationError) report.problems.push(error.message);
    else {
      report.failure = endedBy;
      report.exitCode = EXIT.documentsFailed;
      log.error('run stopped', { reason: endedBy });
    }
  }
  stop.removeEventListener('abort', onStop);
  finish(report, endedBy);
  log.info('run finished', { exitCode: report.exitCode, ...report.intake.counts, problems: report.problems.length });
  return report;
}

export const DEFAULT_GRACE_MS = 20_000;

async function work(
  options: RunOptions,
  report: RunReport,
  log: Logger,
  stop: AbortSignal,
  inFlight: Map<string, ClaimedDocument>,
): Promise<void> {
  const config = loadConfig(options.location);
  const tasks = selectTasks(config.tasks, options.task, options.location.jobsDir).filter((t) => t.enabled);
  for (const { file, path, message, task } of config.advice) {
    // Each CronJob tells what concerns its own task, not its neighbours'.
    if (tasks.some((t) => t.name === task)) log.warn('configuration advice', { file, key: path, advice: message });
  }
  // Every task is reported, whether it runs or not.
  for (const task of tasks) taskSummary(report, task.name);
  report.repositoryUrl = config.storage.url;
  // Stopped while the program was starting: nothing is read or written.
  if (stop.aborted) return;
  const registry = featureRegistry();
  const client = new RepositoryClient(config.storage, log, registry);
  const { writer, ...ports } = portsFor(options.dryRun, client);
  report.plannedCalls = ports.plannedCalls;
  const loaded = await usableMapping(client, config, registry, report, log);
  const sink = options.onDocument ?? (() => undefined);
  const onFound = options.onFound ?? (() => undefined);
  if (stop.aborted) return;
  const alsoReads = (useCase: UseCase): string[] =>
    tasks.filter((task) => task.useCase === useCase).flatMap((task) => taskReads(task, callFor(task).call));
  const intakeDeps = {
    client,
    writer,
    log,
    runId: report.runId,
    claimTimeoutMs: config.storage.intakeClaimTimeoutMs,
    pageSize: config.storage.pageSize,
    stop,
    alsoReads,
    found: (count: number) => onFound(INTAKE, count),
    shard: shardCondition(options.shard),
  };
  const labelled = new Labelled();
  const erpFor = await erpPorts(config.erp.systems, tasks, ports.erp, log, stop);
  const systems = new Map(config.erp.systems.map((system) => [system.name, system]));
  // A document naming an unknown system is never admitted (it waits for input), so every lookup finds one.
  const system = (name: string): ErpSystemConfig => systems.get(name) as ErpSystemConfig;
  // The documents the previous round settled, and those this one settles.
  let settledBefore = new Set<string>();
  const runTasks = async (): Promise<void> => {
    // What was labelled up to now; what pages still under way label meanwhile goes to the next round.
    const handed = labelled.take();
    const settled = new Set<string>();
    for (const task of tasks) {
      if (stop.aborted) return;
      const deps: TaskDeps = {
        client,
        writer,
        erpFor,
        system,
        log: log.child({ task: task.name }),
        runId: report.runId,
        stop,
        inFlight,
        labelled: handed.for(task.useCase),
        found: (count) => onFound(taskPhase(task.name), count),
        shard: intakeDeps.shard,
        settledBefore,
      };
      await runPhase(taskSummary(report, task.name), stop, () =>
        runTask(task, deps, (record) => {
          settled.add(record.uid);
          sink(taskPhase(task.name), recordTask(report, record));
        }),
      );
    }
    settledBefore = settled;
  };
  if (loaded === undefined) {
    report.intake.state = 'skipped';
    report.intake.reason = 'the mapping file cannot be used (see the problems); the tasks run on';
  } else {
    const rounds = new Rounds(config.storage.intakeRoundSize, runTasks);
    await runPhase(report.intake, stop, () =>
      runIntake(loaded.mapping, { ...intakeDeps, afterPage: () => rounds.afterPage() }, (record, doc) => {
        sink(INTAKE, recordIntake(report, record));
        labelled.add(record, doc);
        rounds.count();
      }),
    );
    // The intake's own time: the rounds of the tasks it waited on are theirs.
    report.intake.durationMs -= rounds.tasksMs;
  }
  await runTasks();
}

/**
 * The intake hands over to the tasks every `size` documents and goes on with its next page once
 * they are done: with a backlog of any size, the first documents reach SAP after one round, not
 * after the whole backlog is labelled. A round starts as its last document is labelled; the
 * pages under way wait for it at their end.
 */
class Rounds {
  tasksMs = 0;
  private since = 0;
  private round: Promise<void> = Promise.resolve();

  constructor(
    private readonly size: number,
    private readonly runTasks: () => Promise<void>,
  ) {}

  count(): void {
    this.since += 1;
    if (this.since < this.size) return;
    this.since = 0;
    this.round = this.handOver();
  }

  async afterPage(): Promise<void> {
    await this.round;
  }

  private async handOver(): Promise<void> {
    const started = performance.now();
    await this.runTasks();
    this.tasksMs += Math.round(performance.now() - started);
  }
}

/**
 * The mapping file's usable entries. Its problems are the run's (exit 2), but documents already
 * labelled are no less ready: an entry with a problem stops its own folder's intake, a file that
 * cannot be used at all stops the intake, and the tasks run either way.
 */
async function usableMapping(
  client: RepositoryClient,
  config: Config,
  registry: SchemaRegistry,
  report: RunReport,
  log: Logger,
): Promise<LoadedMapping | undefined> {
  let loaded: LoadedMapping;
  try {
    loaded = await loadMapping(client, {
      adminPath: config.storage.adminPath,
      administrators: config.storage.administrators,
      registry,
      systems: config.erp.systems.map((s) => s.name),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    report.problems.push(...error.problems.map(formatProblem));
    log.error('mapping file refused', { problems: error.problems.length });
    return undefined;
  }
  report.mappingFile = { uid: loaded.document.uid, path: loaded.document.path, readableBy: loaded.readableBy };
  if (loaded.problems.length > 0) {
    report.problems.push(...loaded.problems.map(formatProblem));
    log.error('mapping entries refused', { problems: loaded.problems.length, kept: loaded.mapping.mapping.length });
  }
  if (loaded.readableBy.length > 0) {
    const warning = `the mapping file ${loaded.document.path} can be read by ${loaded.readableBy.join(', ')}; only administrators should (spec §5.2)`;
    report.warnings.push(warning);
    log.warn('mapping file readable by non-administrators', {
      path: loaded.document.path,
      readableBy: loaded.readableBy,
    });
  }
  return loaded;
}

/**
 * Documents this run's intake labelled READY, by use case, for this run's tasks (labelledPages):
 * the last LABELLED_HELD of them, so that memory stays bounded. The last ones are those a search
 * index that lags writes is least likely to show the task; the earlier ones the task's search
 * finds, or a later run's.
 */
class Labelled {
  /** In the order labelled: a Map keeps insertion order, so the oldest is its first key. */
  private readonly held = new Map<string, { useCase: UseCase; doc: RepositoryDocument }>();

  add(record: IntakeRecord, labelled: RepositoryDocument | undefined): void {
    if (labelled === undefined || record.status !== 'READY') return;
    this.held.set(labelled.uid, { useCase: record.useCase, doc: labelled });
    if (this.held.size > LABELLED_HELD) this.held.delete(this.held.keys().next().value as string);
  }

  for(useCase: UseCase): RepositoryDocument[] {
    return [...this.held.values()].filter((entry) => entry.useCase === useCase).map((entry) => entry.doc);
  }

  /** The documents held, handed over to a round of the tasks: a later round gets only those labelled since. */
  take(): Labelled {
    const taken = new Labelled();
    for (const [uid, entry] of this.held) taken.held.set(uid, entry);
    this.held.clear();
    return taken;
  }
}

export const LABELLED_HELD = 2_000;

/**
 * One phase of the run (the intake, a task), timed. It is `stopped` until it ends: an error, or
 * the grace period running out, leaves it so; it is `finished` when it ends before any stop.
 */
async function runPhase(phase: Phase, stop: AbortSignal, work: () => Promise<void>): Promise<void> {
  const started = performance.now();
  phase.state = 'stopped';
  await work();
  phase.state = stop.aborted ? 'stopped' : 'finished';
  // A task runs once per round of the intake: its time is the sum of its rounds.
  phase.durationMs += Math.round(performance.now() - started);
}
