import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { configLocation } from './config/location.js';
import { ConfigError, errorMessage } from '../common/errors.js';
import { EXIT, EXIT_MEANING } from './job/report/report.js';
import type { StopSignals } from './signals.js';
import type { Command, OptionSpec, Values } from './commands/command.js';
import { OPTIONAL_PART_COMMANDS } from './commands/optional-part.js';
import { projectRoot } from '../common/project.js';

const HELP: Record<string, OptionSpec> = { help: { type: 'boolean', short: 'h', text: 'print this help and exit' } };
const LOCATION: Record<string, OptionSpec> = {
  config: { type: 'string', value: 'DIR', text: 'configuration folder (default: $CONNECT2ERP_CONFIG or ./config)' },
  jobs: {
    type: 'string',
    value: 'DIR',
    text: 'task folder (default: $CONNECT2ERP_JOBS or the jobs folder beside the configuration)',
  },
};
const CRONTAB: OptionSpec = {
  type: 'string',
  value: 'FILE',
  text: 'schedules (default: $CONNECT2ERP_CRONTAB or the crontab file beside the configuration)',
};
const TASK: OptionSpec = { type: 'string', value: 'NAME', text: 'only this task' };

const location = (values: Values) =>
  configLocation({ config: values.config as string | undefined, jobs: values.jobs as string | undefined });

const COMMANDS: Record<string, Command> = {
  validate: {
    summary: 'check the configuration, the jobs and the crontab without contacting any server',
    options: { ...LOCATION, crontab: CRONTAB },
    async run({ values }) {
      const { validateCommand } = await import('./commands/validate.js');
      return validateCommand(location(values), values.crontab as string | undefined);
    },
  },
  run: {
    summary: 'label new documents and process the ready ones',
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
      grace: {
        type: 'string',
        value: 'D',
        text: 'how long calls under way may finish once the run stops (default 20s)',
      },
      ...LOCATION,
    },
    windsDown: true,
    async run({ values, signals }) {
      const { runCommand } = await import('./commands/run.js');
      return runCommand(
        {
          location: location(values),
          dryRun: values['dry-run'] === true,
          task: values.task as string | undefined,
          report: values.report as string | undefined,
          reportHtml: values['report-html'] as string | undefined,
          maxDuration: values['max-duration'] as string | undefined,
          grace: values.grace as string | undefined,
        },
        signals,
      );
    },
  },
  schedule: {
    summary: "run the crontab's lines until SIGTERM (the scheduled container)",
    options: { ...LOCATION, crontab: CRONTAB },
    windsDown: true,
    async run({ values, signals }) {
      const { scheduleCommand } = await import('./commands/schedule.js');
      return scheduleCommand(location(values), values.crontab as string | undefined, signals);
    },
  },
  status: {
    summary: 'documents per status per task, and the failures with their messages',
    options: { task: TASK, ...LOCATION },
    async run({ values }) {
      const { statusCommand } = await import('./commands/operator.js');
      return statusCommand(location(values), values.task as string | undefined);
    },
  },
  retry: {
    summary: 'put FAILED documents back to READY for the next run',
    options: {
      task: TASK,
      doc: { type: 'string', value: 'UID', text: 'only this document' },
      'dry-run': { type: 'boolean', text: 'list what would be put back, change nothing' },
      ...LOCATION,
    },
    async run({ values }) {
      const { retryCommand } = await import('./commands/operator.js');
      return retryCommand(location(values), {
        task: values.task as string | undefined,
        uid: values.doc as string | undefined,
        dryRun: values['dry-run'] === true,
      });
    },
  },
  template: {
    args: 'link|barcode|workflow|workflow-to-agent RFC|Rest',
    summary: 'print a built-in call as YAML, to adapt in a task file',
    options: {},
    async run({ positionals }) {
      const { templateCommand } = await import('./commands/template.js');
      return templateCommand(positionals[1], positionals[2]);
    },
  },
  ...OPTIONAL_PART_COMMANDS,
};

const EXIT_CODES = `exit codes: ${Object.entries(EXIT_MEANING)
  .map(([code, meaning]) => `${code} ${meaning}`)
  .join(', ')}`;

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, spec]) => [
    `${spec.short === undefined ? '    ' : `-${spec.short}, `}--${name}${spec.value === undefined ? '' : ` ${spec.value}`}`,
    spec.text,
  ]);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, text]) => `  ${left.padEnd(width)}  ${text}`);
}

function commandUsage(name: string): string {
  const command = COMMANDS[name];
  const options = Object.keys(command.options).length > 0 ? ' [options]' : '';
  return [
    `usage: connect2erp ${name}${command.args === undefined ? '' : ` ${command.args}`}${options}`,
    '',
    command.summary,
    ...(command.details === undefined ? [] : [command.details]),
    '',
    'options:',
    ...optionLines({ ...command.options, ...HELP }),
    '',
    EXIT_CODES,
  ].join('\n');
}

function programUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    'usage: connect2erp <command> [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    'connect2erp <command> --help   the options of a command',
    'connect2erp --version          the version',
    '',
    EXIT_CODES,
  ].join('\n');
}

const version = (): string =>
  (JSON.parse(readFileSync(join(projectRoot(import.meta.dirname), 'package.json'), 'utf8')) as { version: string })
    .version;

/** A flag anywhere on the command line: a request for help is never also a request to act. */
const asksFor = (argv: string[], ...flags: string[]): boolean => argv.some((arg) => flags.includes(arg));

function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return EXIT.ok;
}

function refuse(message: string, usage: string): number {
  process.stderr.write(`${message}\n\n${usage}\n`);
  return EXIT.configuration;
}

/** Runs one command; a configuration error or a failure to start is a message and an exit code, not a stack trace. */
export async function main(argv: string[], signals: StopSignals): Promise<number> {
  try {
    return await dispatch(argv, signals);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.problems.length} problem(s):\n${error.message}\n`);
      return EXIT.configuration;
    }
    process.stderr.write(`connect2erp: ${errorMessage(error)}\n`);
    return EXIT.documentsFailed;
  }
}

async function dispatch(argv: string[], signals: StopSignals): Promise<number> {
  const [name] = argv;
  if (name === 'help')
    return argv[1] !== undefined && argv[1] in COMMANDS ? print(commandUsage(argv[1])) : print(programUsage());
  if (name === undefined || name.startsWith('-')) {
    if (asksFor(argv, '--version')) return print(version());
    if (asksFor(argv, '--help', '-h')) return print(programUsage());
    return refuse(
      name === undefined ? 'connect2erp: no command given' : `connect2erp: unknown option ${name}`,
      programUsage(),
    );
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) return refuse(`connect2erp: unknown command ${name}`, programUsage());
  if (asksFor(argv, '--help', '-h')) return print(commandUsage(name));
  if (asksFor(argv, '--version')) return print(version());
  let parsed;
  try {
    const options: ParseArgsConfig['options'] = Object.fromEntries(
      Object.entries(command.options).map(([key, { type, default: value }]) => [
        key,
        value === undefined ? { type } : { type, default: value },
      ]),
    );
    parsed = parseArgs({ args: argv.slice(1), options, allowPositionals: command.args !== undefined, strict: true });
  } catch (error) {
    return refuse(`connect2erp ${name}: ${errorMessage(error)}`, commandUsage(name));
  }
  if (command.windsDown === undefined) signals.listen(() => process.exit(EXIT.interrupted));
  return command.run({ values: parsed.values as Values, positionals: [name, ...parsed.positionals], signals });
}
