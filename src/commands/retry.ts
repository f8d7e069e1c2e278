import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { retryFailed } from '../operator/retry.js';
import { operatorSetUp } from '../operator/set-up.js';
import { portsFor } from '../ports/ports.js';
import { LOCATION, location, TASK, type Command, OPERATOR_EXITS } from './command.js';

/** `connect2erp retry`: FAILED documents back to READY for the next run; with --dry-run, only the list. */
async function retryCommand(
  location: Required<ConfigLocation>,
  options: { task?: string; uid?: string; dryRun: boolean },
): Promise<number> {
  const { client, tasks, log } = operatorSetUp(location, options.task);
  const reset = await retryFailed({ tasks, uid: options.uid }, client, portsFor(options.dryRun, client).writer, log);
  const verb = options.dryRun ? 'would be put' : 'put';
  process.stdout.write(
    `${reset.length} document(s) ${verb} back to READY${reset.map((d) => `\n  ${d.path} (${d.uid})`).join('')}\n`,
  );
  return EXIT.ok;
}

export const command: Command = {
  exits: OPERATOR_EXITS,
  options: {
    task: TASK,
    doc: { type: 'string', value: 'UID', text: 'only this document' },
    'dry-run': { type: 'boolean', text: 'list what would be put back, change nothing' },
    ...LOCATION,
  },
  run: ({ strings, flags }) =>
    retryCommand(location(strings), { task: strings.task, uid: strings.doc, dryRun: flags['dry-run'] }),
};
