import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { configLocation, loadConfig, selectTasks } from './config/load.js';
import { ConfigError, errorMessage } from './errors.js';
import { createLogger } from './log.js';
import { EXIT, EXIT_MEANING } from './report/report.js';
import { runCommand } from './commands/run.js';
import { scheduleCommand } from './commands/schedule.js';
import { crontabLocation, loadCrontab } from './config/crontab.js';
import { DURATION_HINT, parseDuration } from './config/duration.js';
import { runDemo } from './sandbox/demo.js';
import { startSandbox } from './sandbox/start.js';
import { USE_CASES, type UseCase } from './config/task-schema.js';
import { retryFailed } from './operator/retry.js';
import { renderStatus, taskStatus } from './operator/status.js';
import { RepositoryClient } from './repository/client.js';
import { dryRunWriter, liveWriter } from './repository/writer.js';
import { templateYaml } from './tasks/templates.js';

const USAGE = `usage: connect2erp <command> [options]

commands:
  validate [--crontab FILE]      check configuration, jobs and the crontab without contacting any server
  run [--dry-run] [--task NAME] [--report FILE] [--report-html FILE] [--max-duration D] [--grace D]
                                 label new documents and process ready ones; on SIGTERM or after
                                 --max-duration (e.g. 25m) stop claiming, give calls under way
                                 --grace (default 20s), release the rest, report, exit 3
  schedule [--crontab FILE]      run the crontab's lines until SIGTERM (the scheduled container)
  status [--task NAME]           documents per status per task, and the failures with their messages
  retry [--task NAME] [--doc UID] [--dry-run]
                                 put FAILED documents back to READY for the next run
  template USE_CASE RFC|Rest     print the built-in call of a use case (link, barcode, workflow) as YAML
  sandbox [--repo-port N] [--erp-port N] [--data DIR]
                                 start the local repository and ERP sandboxes in the foreground
  demo [--data DIR]              run the whole feature on the sandbox

common options:
  --config DIR                   configuration folder (default: $CONNECT2ERP_CONFIG or ./config)
  --jobs DIR                     task folder (default: $CONNECT2ERP_JOBS or the jobs folder beside the configuration)
  --crontab FILE                 schedules (default: $CONNECT2ERP_CRONTAB or the crontab file beside the configuration)

exit codes: ${Object.entries(EXIT_MEANING).map(([code, meaning]) => `${code} ${meaning}`).join(', ')}`;

const OPTIONS = {
  config: { type: 'string' },
  jobs: { type: 'string' },
  'dry-run': { type: 'boolean' },
  task: { type: 'string' },
  doc: { type: 'string' },
  report: { type: 'string' },
  'report-html': { type: 'string' },
  'max-duration': { type: 'string' },
  grace: { type: 'string' },
  crontab: { type: 'string' },
  'repo-port': { type: 'string', default: '8080' },
  'erp-port': { type: 'string', default: '8081' },
  data: { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** Every log line of a command carries its run id; `run` makes its own (the report's). */
const commandLogger = () => createLogger().child({ runId: randomUUID() });

/** A duration option in milliseconds; a bad one is a configuration error. */
function durationOption(option: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = parseDuration(text);
  if (value === undefined) throw new ConfigError([{ file: 'command line', path: `--${option}`, message: `"${text}" is not ${DURATION_HINT}` }]);
  return value;
}

/** Configuration, a repository client and the tasks an operator command works on (all, or --task). */
function operatorSetUp(location: ReturnType<typeof configLocation>, name: string | undefined) {
  const config = loadConfig(location);
  const log = commandLogger();
  return { tasks: selectTasks(config.tasks, name, location.jobsDir), client: new RepositoryClient(config.storage, log), log };
}

/** Runs one command; a configuration error or a failure to start is a message and an exit code, not a stack trace. */
export async function main(argv: string[]): Promise<number> {
  try {
    return await command(argv);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.problems.length} problem(s):\n${error.message}\n`);
      return EXIT.configuration;
    }
    process.stderr.write(`connect2erp: ${errorMessage(error)}\n`);
    return EXIT.documentsFailed;
  }
}

async function command(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return EXIT.configuration;
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  const location = configLocation({ config: values.config, jobs: values.jobs });
  switch (command) {
    case 'validate': {
      const config = loadConfig(location);
      const crontab = crontabLocation(location.configDir, values.crontab);
      // A deployment without the scheduled container may have no crontab; one that is named must exist.
      const schedules = values.crontab !== undefined || existsSync(crontab) ? `, ${loadCrontab(crontab, config.tasks, location.jobsDir).length} schedule(s)` : ', no crontab';
      process.stdout.write(`configuration is valid: ${config.tasks.length} task(s), ${config.erp.systems.length} ERP system(s)${schedules}\n`);
      return EXIT.ok;
    }
    case 'run':
      return runCommand({
        location, dryRun: values['dry-run'] ?? false, task: values.task, report: values.report, reportHtml: values['report-html'],
        maxDurationMs: durationOption('max-duration', values['max-duration']), graceMs: durationOption('grace', values.grace),
      }, createLogger());
    case 'schedule':
      return scheduleCommand(location, crontabLocation(location.configDir, values.crontab), commandLogger());
    case 'status': {
      const { client, tasks } = operatorSetUp(location, values.task);
      process.stdout.write(`${renderStatus(await taskStatus(tasks, client))}\n`);
      return EXIT.ok;
    }
    case 'retry': {
      const { client, tasks, log } = operatorSetUp(location, values.task);
      const dryRun = values['dry-run'] ?? false;
      const reset = await retryFailed({ tasks, uid: values.doc }, client, dryRun ? dryRunWriter() : liveWriter(client), log);
      const verb = dryRun ? 'would be put' : 'put';
      process.stdout.write(`${reset.length} document(s) ${verb} back to READY${reset.map((d) => `\n  ${d.path} (${d.uid})`).join('')}\n`);
      return EXIT.ok;
    }
    case 'template': {
      const [, useCase, transport] = positionals;
      if (!USE_CASES.includes(useCase as UseCase) || (transport !== 'RFC' && transport !== 'Rest')) {
        process.stderr.write(`usage: connect2erp template ${USE_CASES.join('|')} RFC|Rest\n`);
        return EXIT.configuration;
      }
      process.stdout.write(templateYaml(useCase as UseCase, transport));
      return EXIT.ok;
    }
    case 'sandbox': {
      await startSandbox({ port: Number(values['repo-port']), erpPort: Number(values['erp-port']), dataDir: values.data }, (line) => process.stdout.write(`${line}\n`));
      return EXIT.ok;
    }
    case 'demo':
      return runDemo({ dataDir: values.data }, (line) => process.stdout.write(`${line}\n`));
    default:
      process.stderr.write(`${command === undefined || values.help ? '' : `unknown command: ${command}\n`}${USAGE}\n`);
      return command === undefined && values.help ? EXIT.ok : EXIT.configuration;
  }
}
