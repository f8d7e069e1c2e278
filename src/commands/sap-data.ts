import { systemClock } from '../clock.js';
import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { readSapData, type SapDataRecord } from '../operator/sap-data.js';
import { LOCATION, location, TASK, type Command } from './command.js';
import { erpOperatorSetUp } from '../operator/set-up.js';

/** `connect2erp sap-data`: "Open in SAP" and SAP's data for DONE documents linked before they were configured. */
async function sapDataCommand(
  where: Required<ConfigLocation>,
  options: { task?: string; uid?: string; again: boolean; dryRun: boolean },
): Promise<number> {
  const { tasks, deps } = await erpOperatorSetUp(where, options.task, options.dryRun);
  let [done, told] = [0, 0];
  const verb = options.dryRun ? 'would write' : 'wrote';
  const onRecord = (record: SapDataRecord): void => {
    done += record.written.length > 0 ? 1 : 0;
    told += record.problems.length > 0 ? 1 : 0;
    const what = record.written.length > 0 ? `${verb} ${record.written.join(', ')}` : 'nothing written';
    const why = record.problems.map((problem) => `\n    ${problem}`).join('');
    process.stdout.write(`${record.path} (${record.uid}): ${what}${why}\n`);
  };
  await readSapData(tasks, { uid: options.uid, again: options.again }, { ...deps, now: systemClock }, onRecord);
  process.stdout.write(`${done} document(s): ${verb} SAP's data; ${told} with something SAP could not give\n`);
  return told > 0 ? EXIT.documentsFailed : EXIT.ok;
}

export const command: Command = {
  exits: {
    0: 'done',
    1: "a document's data could not be read or written (each is listed)",
    2: 'configuration or usage error',
    3: 'interrupted',
  },
  options: {
    task: TASK,
    doc: { type: 'string', value: 'UID', text: 'only this document' },
    again: { type: 'boolean', text: 'also the documents read before (SAP may have changed them)' },
    'dry-run': { type: 'boolean', text: 'read from SAP, write nothing to the repository' },
    ...LOCATION,
  },
  run: ({ strings, flags }) =>
    sapDataCommand(location(strings), {
      task: strings.task,
      uid: strings.doc,
      again: flags.again,
      dryRun: flags['dry-run'],
    }),
};
