import { systemClock } from '../clock.js';
import type { IntakeRecord, TaskRecord } from './records.js';

/**
 * What a run tells as it goes, and the clock it reads: one object the CLI (its progress line and
 * report file) or a test injects. A phase is `INTAKE` or `taskPhase(name)` (report/report-file.ts).
 */
export interface RunObserver {
  /** The clock claims, back-offs and probes are read from: a test moves it on instead of waiting. */
  now: () => Date;
  /** Every document's record as it is made (the report keeps only the first LISTED_MAX per phase). */
  document: (phase: string, record: IntakeRecord | TaskRecord) => void;
  /** How many documents a phase found to work on, as each of its searches tells (progress). */
  found: (phase: string, count: number) => void;
  /** A phase's backlog is all counted: every search of it has told, and no other source feeds it. */
  settled: (phase: string) => void;
}

const quiet = (): void => undefined;

/** The observer a run tells: what was given, the machine's clock and silence for the rest. */
export function observerOf(given: Partial<RunObserver> = {}): RunObserver {
  return { now: systemClock, document: quiet, found: quiet, settled: quiet, ...given };
}
