import type { ConfigLocation } from '../config/location.js';
import type { IntakeRecord, TaskRecord } from './records.js';
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
  /** Every document's record as it is made (the report keeps only the first LISTED_MAX per phase). */
  onDocument?: DocumentSink;
  /** How many documents a phase found to work on, as each of its searches tells (progress). */
  onFound?: (phase: string, count: number) => void;
  /** A phase's backlog is all counted: every search of it has told, and no other source feeds it. */
  onSettled?: (phase: string) => void;
  /** Only this part of the documents, by uuid: one of n pods that share the work (shard.ts). */
  shard?: Shard;
  /** Only this document (its uid): a pilot on one document. */
  doc?: string;
  /** At most this many documents handed to SAP: a pilot (lanes/send-budget.ts). */
  limit?: number;
  /** The clock claims, back-offs and probes are read from: a test moves it on instead of waiting. */
  now?: () => Date;
}

/** Where every document's record goes, by phase (`INTAKE` or `taskPhase(name)`). */
type DocumentSink = (phase: string, record: IntakeRecord | TaskRecord) => void;
