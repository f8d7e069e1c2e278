import type { InHand } from './lanes/in-hand.js';
import type { IntakeRecord, TaskRecord } from './records.js';
import type { BatchLog } from './report/batch-log.js';
import { INTAKE, taskPhase } from './report/report-file.js';
import { recordIntake, recordTask, type Tally } from './report/report.js';
import type { RunObserver } from './run-observer.js';

/**
 * Where every document's record goes, one object for the run: counted and listed in the tally
 * (the report's phases), told to the observer as the report keeps it, counted in its phase's
 * batch log line, and, once a task has settled the document, the document let go (InHand).
 */
export class RunRecords {
  constructor(
    private readonly tally: Tally,
    private readonly observer: RunObserver,
    private readonly inHand: InHand,
    private readonly batches: { intake: BatchLog; tasks: Map<string, BatchLog> },
  ) {}

  /** What the intake did with a document. */
  intake(emitted: IntakeRecord): void {
    const record = recordIntake(this.tally, emitted);
    this.observer.document(INTAKE, record);
    this.batches.intake.add(record.result === 'labelled' ? String(record.status) : record.result);
  }

  /** What a task did with a document: it is no longer in hand. */
  task(emitted: TaskRecord): void {
    const record = recordTask(this.tally, emitted);
    this.observer.document(taskPhase(record.task), record);
    this.batches.tasks.get(record.task)?.add(record.result);
    this.inHand.done(record.uid);
  }

  /** The intake's last batch line. */
  intakeEnded(): void {
    this.batches.intake.flush();
  }

  /** Each task's last batch line. */
  tasksEnded(): void {
    for (const batch of this.batches.tasks.values()) batch.flush();
  }
}
