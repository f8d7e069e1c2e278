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
  const result = await unlabel(path, client, portsFor(!apply, client).writer, log);
  const verb = apply ? 'unlabelled' : 'would be unlabelled (run again with --apply)';
  const lines = [
    `${result.done.length} document(s) under ${path} ${verb}:`,
    ...result.done.map(
      (d) => `  ${d.path} (${d.uid})${d.folder === undefined ? '' : `, out of ${d.folder}, which goes to the trash`}`,
    ),
  ];
  if (result.left.length > 0)
    lines.push(
      `${result.left.length} left as they are:`,
      ...result.left.map((d) => `  ${d.path} (${d.uid}): ${d.reason}`),
    );
  process.stdout.write(`${lines.join('\n')}\n`);
  return EXIT.ok;
}

export const command: Command = {
  exits: OPERATOR_EXITS,
  args: 'PATH',
  details:
    'Undoes what the intake put on the documents under PATH that were not sent yet (facets, values,\nthe archive-link folder), so that the next run labels them from the corrected mapping entry.\nWithout --apply it only lists them.',
  options: {
    apply: { type: 'boolean', text: 'undo it (without: list what would be undone, change nothing)' },
    ...LOCATION,
  },
  run: ({ strings, flags, positionals }) => unlabelCommand(location(strings), positionals[1], flags.apply),
};
