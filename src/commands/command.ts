import { configLocation, type ConfigLocation } from '../config/location.js';
import type { StopSignals } from '../signals.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** What the value stands for in the usage text: FILE, DIR, NAME, … */
  value?: string;
  default?: string;
  text: string;
}

export interface CommandContext {
  /** The string options given (or defaulted), by name; absent ones are undefined. */
  strings: Record<string, string | undefined>;
  /** The boolean options, by name: true when given. */
  flags: Record<string, boolean>;
  positionals: string[];
  signals: StopSignals;
}

/** One command of the command line: its usage and what it does. Each lives in its own file here. */
export interface Command {
  /** Positional arguments after the command's name, as the usage shows them. */
  args?: string;
  /** More about the command, below its usage line. */
  details?: string;
  options: Record<string, OptionSpec>;
  /**
   * Winds down on SIGTERM or Ctrl-C by itself (a run releases its claims, a server closes). Any
   * other command is cut short at once, exit 3: what it read or wrote so far stays consistent.
   */
  windsDown?: true;
  /** The exit codes this command uses and what each means to it; a run's (EXIT_MEANING) when absent. */
  exits?: Record<number, string>;
  run(context: CommandContext): Promise<number>;
}

/** What an operator command's codes mean: done, the repository or SAP failed it, its input is wrong, a signal. */
export const OPERATOR_EXITS: Record<number, string> = {
  0: 'done',
  1: 'a server failed it (the message says which)',
  2: 'configuration or usage error',
  3: 'interrupted',
};

export const LOCATION: Record<string, OptionSpec> = {
  config: { type: 'string', value: 'DIR', text: 'configuration folder (default: $CONNECT2ERP_CONFIG or ./config)' },
  jobs: {
    type: 'string',
    value: 'DIR',
    text: 'task folder (default: $CONNECT2ERP_JOBS or the jobs folder beside the configuration)',
  },
};
/** For the commands that read no task file (serve, certs): the configuration folder only. */
export const CONFIG_ONLY: Record<string, OptionSpec> = { config: LOCATION.config };
export const CRONTAB: OptionSpec = {
  type: 'string',
  value: 'FILE',
  text: 'schedules (default: $CONNECT2ERP_CRONTAB or the crontab file beside the configuration)',
};
export const TASK: OptionSpec = { type: 'string', value: 'NAME', text: 'only this task' };

/** The configuration and jobs folders the LOCATION options name. */
export const location = (strings: CommandContext['strings']): Required<ConfigLocation> =>
  configLocation({ config: strings.config, jobs: strings.jobs });
