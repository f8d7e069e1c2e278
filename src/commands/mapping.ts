import { writeFileSync } from 'node:fs';
import { ConfigError } from '../../common/errors.js';
import { loadConfig } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { CONFIG_FACET } from '../job/intake/mapping-file.js';
import { commandLogger } from '../log.js';
import { downloadMapping, readLocalMapping, uploadMapping } from '../operator/mapping.js';
import { administratorAccount, refusedTo } from '../operator/administrator.js';
import { RepositoryClient } from '../repository/client.js';
import { LOCATION, location, type Command, OPERATOR_EXITS } from './command.js';

const usage = (message: string): ConfigError => new ConfigError([{ file: 'command line', path: 'mapping', message }]);

/**
 * `connect2erp mapping upload FILE | download [FILE]`: the mapping file in the repository, as the
 * administrator NUXEO_ADMIN names (else the account of storage.yaml, which may read adminPath but,
 * set up as docs/nuxeo-setup.md says, not write there). An upload is checked first, as `validate
 * --mapping` checks it; what it leaves a run to refuse is exit 2.
 */
async function mappingCommand(
  location: Required<ConfigLocation>,
  action: string | undefined,
  file: string | undefined,
): Promise<number> {
  if (action !== 'upload' && action !== 'download') throw usage('say upload FILE or download [FILE]');
  const config = loadConfig(location);
  const { storage, who } = administratorAccount(config.storage);
  const client = new RepositoryClient(storage, commandLogger());
  if (action === 'download') {
    const { path, content } = await downloadMapping(client, config.storage.adminPath);
    if (file === undefined) process.stdout.write(content);
    else {
      writeFileSync(file, content);
      process.stdout.write(`downloaded ${path} to ${file}\n`);
    }
    return EXIT.ok;
  }
  if (file === undefined) throw usage('upload needs the file: connect2erp mapping upload FILE');
  const uploaded = await uploadMapping(client, config, file, readLocalMapping(file)).catch(
    refusedTo(who, 'mapping upload', `write in ${config.storage.adminPath}`),
  );
  process.stdout.write(
    `uploaded ${file} to ${uploaded.path} (${uploaded.created ? 'created' : 'replaced'}), ${uploaded.folders} folder(s) mapped, labelled ${CONFIG_FACET}\n`,
  );
  const warnings: string[] = [];
  if (uploaded.readableBy.length > 0)
    warnings.push(
      `${uploaded.path} can be read by ${uploaded.readableBy.join(', ')}; only administrators should (spec §5.2): block inheritance on adminPath, and list the job's own account in administrators (storage.yaml)`,
    );
  if (uploaded.others.length > 0)
    warnings.push(
      `other documents under adminPath carry ${CONFIG_FACET}: ${uploaded.others.join(', ')}; a run stops until one is left`,
    );
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  return warnings.length > 0 ? EXIT.configuration : EXIT.ok;
}

export const command: Command = {
  exits: { ...OPERATOR_EXITS, 2: 'the file has a problem, others can read it, or the account may not write there' },
  args: 'upload FILE | download [FILE]',
  options: LOCATION,
  run: async ({ strings, positionals }) => mappingCommand(location(strings), positionals[1], positionals[2]),
};
