import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, errorMessage } from '../common/errors.js';
import { EXIT, EXIT_MEANING } from './exit-codes.js';
import type { StopSignals } from './signals.js';
import type { Command, CommandContext, OptionSpec } from './commands/command.js';
import { command as retry } from './commands/retry.js';
import { command as certs } from './commands/certs.js';
import { command as doctor } from './commands/doctor.js';
import { command as mapping } from './commands/mapping.js';
import { command as run } from './commands/run.js';
import { command as schedule } from './commands/schedule.js';
import { command as serve } from './commands/serve.js';
import { command as status } from './commands/status.js';
import { command as template } from './commands/template.js';
import { command as validate } from './commands/validate.js';
import { OPTIONAL_PART_COMMANDS } from './commands/optional-part.js';
import { programVersion } from './version.js';

const HELP: Record<string, OptionSpec> = { help: { type: 'boolean', short: 'h', text: 'print this help and exit' } };

/** The commands, in the order the usage lists them; each is a file of its own in commands/. */
const COMMANDS: Record<string, Command> = {
  validate,
  doctor,
  run,
  schedule,
  status,
  retry,
  mapping,
  serve,
  certs,
  template,
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
    if (asksFor(argv, '--version')) return print(programVersion());
    if (asksFor(argv, '--help', '-h')) return print(programUsage());
    return refuse(
      name === undefined ? 'connect2erp: no command given' : `connect2erp: unknown option ${name}`,
      programUsage(),
    );
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) return refuse(`connect2erp: unknown command ${name}`, programUsage());
  if (asksFor(argv, '--help', '-h')) return print(commandUsage(name));
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
    return refuse(`connect2erp ${name}: ${errorMessage(error)}`, commandUsage(name));
  }
  if (command.windsDown === undefined) signals.listen(() => process.exit(EXIT.interrupted));
  const { strings, flags } = byType(command.options, parsed.values);
  return command.run({ strings, flags, positionals: [name, ...parsed.positionals], signals });
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
