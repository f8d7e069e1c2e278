import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, errorMessage, formatProblem } from '../common/errors.js';
import { EXIT, EXIT_MEANING } from './exit-codes.js';
import type { StopSignals } from './signals.js';
import type { Command, CommandContext, OptionSpec } from './commands/command.js';
import { programVersion } from './version.js';
import { didYouMean } from './did-you-mean.js';

const HELP: Record<string, OptionSpec> = { help: { type: 'boolean', short: 'h', text: 'print this help and exit' } };

interface Entry {
  summary: string;
  /** The command's module, imported only when it runs or its help is asked: a run loads what it uses. */
  load: () => Promise<Command>;
}

/** The commands, in the order the usage lists them; each is a file of its own in commands/. */
const COMMANDS: Record<string, Entry> = {
  validate: {
    summary: 'check the configuration, the jobs and the crontab without contacting any server',
    load: async () => (await import('./commands/validate.js')).command,
  },
  doctor: {
    summary: 'check that the repository, SAP and the content server are reachable and set up as the configuration says',
    load: async () => (await import('./commands/doctor.js')).command,
  },
  run: {
    summary: 'label new documents and process the ready ones',
    load: async () => (await import('./commands/run.js')).command,
  },
  schedule: {
    summary: "run the crontab's lines until SIGTERM (the scheduled container)",
    load: async () => (await import('./commands/schedule.js')).command,
  },
  status: {
    summary: 'documents per status per task, and the failures with their messages',
    load: async () => (await import('./commands/status.js')).command,
  },
  retry: {
    summary: 'put FAILED documents back to READY for the next run',
    load: async () => (await import('./commands/retry.js')).command,
  },
  reconcile: {
    summary: 'compare the DONE documents with what SAP holds, both ways; --requeue sends the missing ones again',
    load: async () => (await import('./commands/reconcile.js')).command,
  },
  'sap-data': {
    summary: '"Open in SAP" and SAP\'s data for DONE documents linked before they were configured (or --again)',
    load: async () => (await import('./commands/sap-data.js')).command,
  },
  unlabel: {
    summary: 'undo the labels a wrong mapping entry put on documents not sent yet (lists first; --apply)',
    load: async () => (await import('./commands/unlabel.js')).command,
  },
  mapping: {
    summary: 'check and upload the mapping file to adminPath and label it, or download the one a run reads',
    load: async () => (await import('./commands/mapping.js')).command,
  },
  serve: {
    summary: "answer SAP's ArchiveLink HTTP content server calls (contentServer.yaml)",
    load: async () => (await import('./commands/serve.js')).command,
  },
  certs: {
    summary: "list SAP's certificates, approve or revoke one (the content server's signatures)",
    load: async () => (await import('./commands/certs.js')).command,
  },
  template: {
    summary: 'print a built-in call as YAML, to adapt in a task file',
    load: async () => (await import('./commands/template.js')).command,
  },
  sandbox: {
    summary: 'start the local repository and ERP sandboxes in the foreground, until SIGTERM or Ctrl-C',
    load: async () => (await import('./commands/optional-part.js')).OPTIONAL_PART_COMMANDS.sandbox,
  },
  demo: {
    summary: 'run the whole feature on the sandbox: a dry run, a run, a user filling in values, the next runs',
    load: async () => (await import('./commands/optional-part.js')).OPTIONAL_PART_COMMANDS.demo,
  },
};

const exitCodes = (meanings: Record<number, string>): string =>
  `exit codes: ${Object.entries(meanings)
    .map(([code, meaning]) => `${code} ${meaning}`)
    .join(', ')}`;
const EXIT_CODES = exitCodes(EXIT_MEANING);

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, spec]) => [
    `${spec.short === undefined ? '    ' : `-${spec.short}, `}--${name}${spec.value === undefined ? '' : ` ${spec.value}`}`,
    spec.text,
  ]);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, text]) => `  ${left.padEnd(width)}  ${text}`);
}

function commandUsage(name: string, command: Command): string {
  const options = Object.keys(command.options).length > 0 ? ' [options]' : '';
  return [
    `usage: connect2erp ${name}${command.args === undefined ? '' : ` ${command.args}`}${options}`,
    '',
    COMMANDS[name].summary,
    ...(command.details === undefined ? [] : [command.details]),
    '',
    'options:',
    ...optionLines({ ...command.options, ...HELP }),
    '',
    exitCodes(command.exits ?? EXIT_MEANING),
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
      // Also as a log line at level error, which log-based alerting reads (JSON off a terminal).
      const { createLogger } = await import('./log.js');
      createLogger().error('configuration refused', { problems: error.problems.map(formatProblem) });
      return EXIT.configuration;
    }
    process.stderr.write(`connect2erp: ${errorMessage(error)}\n`);
    return EXIT.documentsFailed;
  }
}

async function dispatch(argv: string[], signals: StopSignals): Promise<number> {
  const [name] = argv;
  if (name === 'help') {
    const asked = argv[1];
    return asked !== undefined && Object.hasOwn(COMMANDS, asked)
      ? print(commandUsage(asked, await COMMANDS[asked].load()))
      : print(programUsage());
  }
  if (name === undefined || name.startsWith('-')) {
    if (asksFor(argv, '--version')) return print(programVersion());
    if (asksFor(argv, '--help', '-h')) return print(programUsage());
    return refuse(
      name === undefined ? 'connect2erp: no command given' : `connect2erp: unknown option ${name}`,
      programUsage(),
    );
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry === undefined) return refuse(`connect2erp: unknown command ${name}`, programUsage());
  const command = await entry.load();
  if (asksFor(argv, '--help', '-h')) return print(commandUsage(name, command));
  if (asksFor(argv, '--version')) return print(programVersion());
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
    const hint = nearestOption(argv.slice(1), Object.keys(command.options));
    return refuse(`connect2erp ${name}: ${errorMessage(error)}${hint}`, commandUsage(name, command));
  }
  if (command.windsDown === undefined) signals.listen(() => process.exit(EXIT.interrupted));
  const { strings, flags } = byType(command.options, parsed.values);
  return command.run({ strings, flags, positionals: [name, ...parsed.positionals], signals });
}

/** The hint for the first unknown option mistyped from a known one (`--dryrun`). */
function nearestOption(args: string[], known: string[]): string {
  for (const arg of args) {
    const given = /^--([^=]+)/.exec(arg)?.[1];
    if (given === undefined || known.includes(given)) continue;
    const hint = didYouMean(given, known, (option) => `--${option}`);
    if (hint !== '') return hint;
  }
  return '';
}

/** The parsed options, strings and flags apart, as each option's declared type says. */
function byType(
  options: Record<string, OptionSpec>,
  values: Record<string, unknown>,
): Omit<CommandContext, 'positionals' | 'signals'> {
  const strings: CommandContext['strings'] = {};
  const flags: CommandContext['flags'] = {};
  for (const [name, { type }] of Object.entries(options)) {
    const value = values[name];
    if (type === 'boolean') flags[name] = value === true;
    else strings[name] = typeof value === 'string' ? value : undefined;
  }
  return { strings, flags };
}
