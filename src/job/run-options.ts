import type { ConfigLocation } from '../config/location.js';
import type { RunObserver } from './run-observer.js';
import type { Shard } from './shard.js';

/** What a run is asked to do: the command line's options, and what a test or the CLI listens with. */
export interface RunOptions {
  location: Required<ConfigLocation>;
  dryRun: boolean;
  /** Only this task (and always the intake). */
  task?: string;
  /** Fires on SIGTERM or when --max-duration runs out; its reason is reported. */
  stop?: AbortSignal;
  /** How long in-flight work may go on once `stop` fires. */
  graceMs?: number;
  /** What the run tells as it goes (records, progress) and the clock it reads; quiet, on the machine's clock, when left out. */
  observer?: Partial<RunObserver>;
  /** Only this part of the documents, by uuid: one of n pods that share the work (shard.ts). */
  shard?: Shard;
  /** Only this document (its uid): a pilot on one document. */
  doc?: string;
  /** At most this many documents handed to SAP: a pilot (lanes/send-budget.ts). */
  limit?: number;
}
