import { ConfigError, type ConfigProblem } from '../../common/errors.js';
import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { reconcile, type Reconciliation } from '../operator/reconcile/reconcile.js';
import { renderReconciliation } from '../operator/reconcile/render.js';
import type { DayRange } from '../operator/reconcile/sap-side.js';
import { LOCATION, location, TASK, type Command } from './command.js';
import { erpOperatorSetUp } from '../operator/set-up.js';

const DAY_MS = 24 * 3600 * 1000;
/** What a reconciliation covers when no range is given. */
const DEFAULT_DAYS = 30;

/** A `YYYY-MM-DD` option as a UTC day; a bad one is a problem of the command line. */
function dayOption(option: string, text: string | undefined, fallback: Date, problems: ConfigProblem[]): Date {
  if (text === undefined) return fallback;
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00Z`) : undefined;
  if (day !== undefined && !Number.isNaN(day.getTime()) && day.toISOString().startsWith(text)) return day;
  problems.push({ file: 'command line', path: `--${option}`, message: `"${text}" is not a day (YYYY-MM-DD)` });
  return fallback;
}

function rangeOf(from: string | undefined, until: string | undefined): DayRange {
  const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  const problems: ConfigProblem[] = [];
  const range = {
    from: dayOption('from', from, new Date(today.getTime() - DEFAULT_DAYS * DAY_MS), problems),
    until: dayOption('until', until, today, problems),
  };
  if (problems.length === 0 && range.from > range.until)
    problems.push({ file: 'command line', path: '--from', message: `${String(from)} is after --until` });
  if (problems.length > 0) throw new ConfigError(problems);
  return range;
}

/** Differences are for a person (1); a system that did not answer leaves the comparison incomplete (4). */
function exitCode(result: Reconciliation): number {
  if (result.tasks.some((t) => t.incomplete)) return EXIT.unavailable;
  return result.findings.length > 0 || result.unlisted > 0 ? EXIT.documentsFailed : EXIT.ok;
}

async function reconcileCommand(
  where: Required<ConfigLocation>,
  options: ReconcileOptions & { json: boolean },
): Promise<number> {
  const { code, result } = await reconciliation(where, options);
  process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : renderReconciliation(result));
  return code;
}

export interface ReconcileOptions {
  task?: string;
  from?: string;
  until?: string;
  requeue: boolean;
  dryRun: boolean;
}

/** The reconciliation `reconcile` prints, and the exit code it ends with. */
export async function reconciliation(
  where: Required<ConfigLocation>,
  options: ReconcileOptions,
): Promise<{ code: number; result: Reconciliation }> {
  const range = rangeOf(options.from, options.until);
  const { tasks, deps } = await erpOperatorSetUp(where, options.task, options.dryRun);
  const result = await reconcile(tasks, range, options.requeue, deps);
  return { code: exitCode(result), result };
}

export const command: Command = {
  exits: {
    0: 'SAP and the repository agree',
    1: 'differences, listed',
    2: 'configuration or usage error',
    3: 'interrupted',
    4: 'an SAP system did not answer: the comparison is incomplete',
  },
  details:
    'Read-only unless --requeue. Exit 0: SAP and the repository agree; 1: differences, listed;\n2: configuration; 4: an SAP system did not answer, so the comparison is incomplete.',
  options: {
    task: TASK,
    from: { type: 'string', value: 'DAY', text: `first day (YYYY-MM-DD, UTC; default ${DEFAULT_DAYS} days ago)` },
    until: { type: 'string', value: 'DAY', text: 'last day (YYYY-MM-DD, UTC; default today)' },
    requeue: { type: 'boolean', text: 'put DONE documents SAP does not have back to READY, for the next run to send' },
    'dry-run': { type: 'boolean', text: 'with --requeue: say what would be put back, change nothing' },
    json: { type: 'boolean', text: 'the result as JSON' },
    ...LOCATION,
  },
  run: ({ strings, flags }) =>
    reconcileCommand(location(strings), {
      task: strings.task,
      from: strings.from,
      until: strings.until,
      requeue: flags.requeue,
      dryRun: flags['dry-run'],
      json: flags.json,
    }),
};
