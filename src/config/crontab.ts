import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Cron } from 'croner';
import { ConfigError, errorMessage, type ConfigProblem } from '../../common/errors.js';
import type { TaskConfig } from './task-schema.js';
import { DURATION_HINT, parseDuration } from './duration.js';

/** One schedule line: `<cron expression> connect2erp run [options]`. */
export interface CrontabEntry {
  line: number;
  schedule: string;
  /** The arguments after `connect2erp`, starting with `run`. */
  args: string[];
  /** The task the line runs; undefined runs every enabled task. */
  task?: string;
}

/** Options a schedule line may give `run`; the scheduler adds the configuration and jobs folders itself. */
const LINE_OPTIONS = {
  task: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'max-duration': { type: 'string' },
  grace: { type: 'string' },
  report: { type: 'string' },
  'report-html': { type: 'string' },
} as const;

/** `--crontab FILE`, else $CONNECT2ERP_CRONTAB, else `crontab` beside the configuration folder. */
export function crontabLocation(configDir: string, option?: string): string {
  return resolve(option ?? process.env.CONNECT2ERP_CRONTAB ?? join(dirname(configDir), 'crontab'));
}

/**
 * The deployment's schedules, or undefined when it has no crontab: one without the scheduled
 * container may have none; one that is named must exist.
 */
export function deploymentSchedules(
  configDir: string,
  option: string | undefined,
  tasks: TaskConfig[],
  jobsDir: string,
): CrontabEntry[] | undefined {
  const file = crontabLocation(configDir, option);
  return option !== undefined || existsSync(file) ? loadCrontab(file, tasks, jobsDir) : undefined;
}

function parseLine(text: string, line: number, file: string, problems: ConfigProblem[]): CrontabEntry | undefined {
  const words = text.trim().split(/\s+/);
  const at = words.indexOf('connect2erp');
  const problem = (message: string): undefined => {
    problems.push({ file, path: `line ${line}`, message });
    return undefined;
  };
  if (at < 1) return problem('expected "<cron expression> connect2erp run [options]"');
  const schedule = words.slice(0, at).join(' ');
  try {
    new Cron(schedule, { paused: true });
  } catch (error) {
    return problem(`"${schedule}" is not a cron expression: ${errorMessage(error)}`);
  }
  const args = words.slice(at + 1);
  if (args[0] !== 'run') return problem(`only "connect2erp run" can be scheduled, not "connect2erp ${args.join(' ')}"`);
  let values;
  try {
    values = parseArgs({ args: args.slice(1), options: LINE_OPTIONS, allowPositionals: false }).values;
  } catch (error) {
    return problem(
      `${errorMessage(error)}; a line may give ${Object.keys(LINE_OPTIONS)
        .map((o) => `--${o}`)
        .join(', ')}`,
    );
  }
  for (const option of ['max-duration', 'grace'] as const) {
    const text = values[option];
    if (text !== undefined && parseDuration(text) === undefined)
      return problem(`--${option} "${text}" is not ${DURATION_HINT}`);
  }
  return { line, schedule, args, task: values.task };
}

/**
 * Schedules must agree with the tasks: a line names an existing task at the schedule its
 * job file declares, and every enabled task is run by some line.
 */
function crossCheck(
  entries: CrontabEntry[],
  tasks: TaskConfig[],
  file: string,
  jobsDir: string,
  problems: ConfigProblem[],
): void {
  const byName = new Map(tasks.map((t) => [t.name, t]));
  for (const entry of entries) {
    if (entry.task === undefined) continue;
    const task = byName.get(entry.task);
    if (task === undefined)
      problems.push({ file, path: `line ${entry.line}`, message: `no task named "${entry.task}" in ${jobsDir}` });
    else if (task.schedule.trim().split(/\s+/).join(' ') !== entry.schedule) {
      problems.push({
        file,
        path: `line ${entry.line}`,
        message: `runs task ${task.name} at "${entry.schedule}" but its job file says schedule "${task.schedule}"; make them the same`,
      });
    }
  }
  const runsAll = entries.some((e) => e.task === undefined);
  for (const task of tasks.filter((t) => t.enabled && !runsAll && !entries.some((e) => e.task === t.name))) {
    problems.push({ file, path: '', message: `task ${task.name} is enabled but no line runs it` });
  }
}

/** Read and check the crontab against the tasks; throws one ConfigError with every problem. */
export function loadCrontab(file: string, tasks: TaskConfig[], jobsDir: string): CrontabEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new ConfigError([{ file, path: '', message: 'cannot read the crontab' }]);
  }
  const problems: ConfigProblem[] = [];
  const entries = text
    .split('\n')
    .map((content, i) => ({ content, line: i + 1 }))
    .filter(({ content }) => content.trim() !== '' && !content.trim().startsWith('#'))
    .map(({ content, line }) => parseLine(content, line, file, problems))
    .filter((entry) => entry !== undefined);
  if (entries.length === 0 && problems.length === 0)
    throw new ConfigError([{ file, path: '', message: 'no schedule lines' }]);
  crossCheck(entries, tasks, file, jobsDir, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return entries;
}
