import type { RepositoryDocument } from '../../repository/document.js';
import type { InHand } from '../lanes/in-hand.js';
import type { MappingFile } from '../intake/mapping-schema.js';
import { runIntake, type IntakeRunDeps } from '../intake/run-intake.js';
import type { IntakeRecord } from '../records.js';
import type { RunRecords } from '../run-records.js';
import type { LabelledFeed } from './labelled-feed.js';

/**
 * The intake as a source of the lanes: the `Document created` replacement labels new files page
 * by page (intake/run-intake.ts), and each document it labels READY goes to the tasks of its use
 * case at once (LabelledFeed). After each page it waits while `intakeRoundSize` of its documents
 * are still unsettled, so a backlog of any size is sent from its first page on, in bounded memory.
 * Another source (an event feed, a watch mode) would hand documents to the same lanes.
 */
export async function intakeSource(
  mapping: MappingFile,
  deps: IntakeRunDeps,
  feed: LabelledFeed,
  inHand: InHand,
  records: RunRecords,
): Promise<void> {
  const afterPage = async (): Promise<void> => {
    await feed.flush();
    await inHand.intakeRoom(deps.stop);
  };
  try {
    await runIntake(
      mapping,
      { ...deps, afterPage },
      (record: IntakeRecord, labelled: RepositoryDocument | undefined) => {
        records.intake(record);
        if (labelled !== undefined && record.status === 'READY') feed.add(record.useCase, labelled);
      },
    );
  } catch (error) {
    // What was handed over is with the lanes before the run reports the failure.
    await feed.flush().catch(() => undefined);
    throw error;
  }
  await feed.flush();
}
