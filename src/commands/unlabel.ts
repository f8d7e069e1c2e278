import { ConfigError } from '../../common/errors.js';
import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { operatorSetUp } from '../operator/set-up.js';
import { unlabel } from '../operator/unlabel.js';
import { portsFor } from '../ports/ports.js';
import { LOCATION, location, OPERATOR_EXITS, type Command } from './command.js';

/**
 * `connect2erp unlabel PATH`: lists what it would undo; with --apply, undoes it. Safe by default:
 * the facets and values go with the labels, so the list comes first.
 */
async function unlabelCommand(
  where: Required<ConfigLocation>,
  path: string | undefined,
  apply: boolean,
): Promise<number> {
  if (path === undefined || !path.startsWith('/'))
    throw new ConfigError([
      {
        file: 'command line',
        path: 'unlabel',
        message: 'give the folder a mapping entry covered, e.g. /default-domain/workspaces/ERP/Invoices',
      },
    ]);
  const { client, log } = operatorSetUp(where, undefined);
  const would = apply ? '' : 'would be ';
  const counts = await unlabel(path, client, portsFor(!apply, client).writer, log, (kind, doc, detail) => {
    const text =
      kind === 'done'
        ? `${would}unlabelled${detail === undefined ? '' : `, out of ${detail}, which goes to the trash`}`
        : `${kind === 'left' ? 'left as it is' : 'not finished'}: ${String(detail)}`;
    process.stdout.write(`${doc.path} (${doc.uid}): ${text}\n`);
  });
  process.stdout.write(
    `${counts.done} document(s) under ${path} ${would}unlabelled, ${counts.left} left as they are, ${counts.failed} not finished${apply ? '' : ' (run again with --apply)'}\n`,
  );
  // A document left half-way is FAILED until the command runs again: an operator's to see.
  return counts.failed > 0 ? EXIT.documentsFailed : EXIT.ok;
}

export const command: Command = {
  exits: {
    ...OPERATOR_EXITS,
    1: 'a document it could not finish (FAILED, saying to run it again), or a server failed it',
  },
  args: 'PATH',
  details:
    'Undoes what the intake put on the documents under PATH that were not sent yet (facets, values,\nthe archive-link folder), so that the next run labels them from the corrected mapping entry.\nWithout --apply it only lists them.',
  options: {
    apply: { type: 'boolean', text: 'undo it (without: list what would be undone, change nothing)' },
    ...LOCATION,
  },
  run: ({ strings, flags, positionals }) => unlabelCommand(location(strings), positionals[1], flags.apply),
};
