import type { StopSignals } from '../signals.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** What the value stands for in the usage text: FILE, DIR, NAME, … */
  value?: string;
  default?: string;
  text: string;
}

export type Values = Record<string, string | boolean | undefined>;

export interface CommandContext {
  values: Values;
  positionals: string[];
  signals: StopSignals;
}

export interface Command {
  /** Positional arguments after the command's name, as the usage shows them. */
  args?: string;
  summary: string;
  /** More about the command, below its usage line. */
  details?: string;
  options: Record<string, OptionSpec>;
  /**
   * Winds down on SIGTERM or Ctrl-C by itself (a run releases its claims, a server closes). Any
   * other command is cut short at once, exit 3: what it read or wrote so far stays consistent.
   */
  windsDown?: true;
  run(context: CommandContext): Promise<number>;
}
