import { ConfigError, formatProblem } from '../../../common/errors.js';
import type { Config } from '../../config/load.js';
import type { SchemaRegistry } from '../../../common/nuxeo/schemas.js';
import type { RepositoryClient } from '../../repository/client.js';
import type { Logger } from '../../log.js';
import type { RunReport } from '../report/report.js';
import { loadMapping, type LoadedMapping } from './mapping-file.js';
import { mappingRules } from './mapping-schema.js';

/** The mapping file as read, and what the report says of it. */
export interface MappingRead {
  loaded?: LoadedMapping;
  told: Pick<RunReport, 'mappingFile' | 'problems' | 'warnings'>;
}

/**
 * The mapping file's usable entries (`loaded`, undefined when the file cannot be used at all). Its
 * problems are the run's (exit 2), but documents already labelled are no less ready: an entry with
 * a problem stops its own folder's intake, a file that cannot be used at all stops the intake, and
 * the tasks run either way.
 */
export async function usableMapping(
  client: RepositoryClient,
  config: Config,
  registry: SchemaRegistry,
  log: Logger,
): Promise<MappingRead> {
  let loaded: LoadedMapping;
  try {
    loaded = await loadMapping(client, {
      adminPath: config.storage.adminPath,
      administrators: config.storage.administrators,
      rules: mappingRules(config, registry),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log.error('mapping file refused', { problems: error.problems.length });
    return { told: { problems: error.problems.map(formatProblem), warnings: [] } };
  }
  const { uid, path } = loaded.document;
  const told: MappingRead['told'] = {
    mappingFile: { uid, path, readableBy: loaded.readableBy },
    problems: loaded.problems.map(formatProblem),
    warnings: [],
  };
  if (loaded.problems.length > 0) {
    log.error('mapping entries refused', { problems: loaded.problems.length, kept: loaded.mapping.mapping.length });
  }
  if (loaded.readableBy.length > 0) {
    const warning = `the mapping file ${loaded.document.path} can be read by ${loaded.readableBy.join(', ')}; only administrators should (spec §5.2)`;
    told.warnings.push(warning);
    log.warn('mapping file readable by non-administrators', {
      path: loaded.document.path,
      readableBy: loaded.readableBy,
    });
  }
  return { loaded, told };
}
