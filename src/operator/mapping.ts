import { readFileSync, statSync } from 'node:fs';
import { ANSWER_MAX_BYTES } from '../bounded-body.js';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { ConfigError } from '../../common/errors.js';
import { featureRegistry } from '../../common/nuxeo/schemas.js';
import type { Config } from '../config/load.js';
import {
  CONFIG_FACET,
  CONFIG_TITLE,
  findMappingDocument,
  findMappingDocuments,
  MAPPING_TOO_LARGE,
  parseMapping,
  readers,
} from '../job/intake/mapping-file.js';
import { mappingRules } from '../job/intake/mapping-schema.js';
import { unlessMissing, type RepositoryClient } from '../repository/client.js';

/** A local mapping file's text; one that cannot be read is a configuration problem naming it. */
export function readLocalMapping(file: string): string {
  const problem = (message: string): ConfigError => new ConfigError([{ file, path: '', message }]);
  try {
    // As a run reads the repository's: never more than it would hold.
    if (statSync(file).size > ANSWER_MAX_BYTES) throw problem(MAPPING_TOO_LARGE);
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw problem(`cannot read the file (${(error as Error).message})`);
  }
}

interface Uploaded {
  path: string;
  created: boolean;
  folders: number;
  /** Principals other than the administrators who can read it (spec §5.2 wants none). */
  readableBy: string[];
  /** Other documents labelled as the mapping file under adminPath: a run refuses to choose. */
  others: string[];
}

/**
 * `mapping upload`: the file is checked as a run checks it, then put where a run finds it: into
 * the document already labelled as the mapping file, whatever its name (one uploaded through Web
 * UI), else `<adminPath>/Connect to ERP Feature Configuration` (spec §4.1), found by its path too,
 * for the search index may not show one created a moment ago; created when there is none. Its
 * content is replaced, and it is labelled.
 */
export async function uploadMapping(
  client: RepositoryClient,
  config: Config,
  file: string,
  text: string,
): Promise<Uploaded> {
  const mapping = parseMapping(text, file, mappingRules(config, featureRegistry()));
  const { adminPath, administrators } = config.storage;
  const folder = await unlessMissing(client.getByPath(adminPath));
  if (folder === undefined)
    throw new ConfigError([
      {
        file: 'storage.yaml',
        path: 'adminPath',
        message: `${adminPath} is not in the repository: create it, inheritance blocked (docs/nuxeo-setup.md)`,
      },
    ]);
  const labelled = await findMappingDocuments(client, adminPath);
  const existing = labelled[0] ?? (await unlessMissing(client.getByPath(`${adminPath}/${CONFIG_TITLE}`)));
  const document = existing ?? (await client.createNamed(folder.uid, { type: 'File', name: CONFIG_TITLE }));
  const content = await client.upload(Readable.from([Buffer.from(text)]), {
    name: basename(file),
    mimeType: 'application/json',
  });
  await client.setProperties(document.uid, {
    'file:content': content,
    ...(existing ? {} : { 'dc:title': CONFIG_TITLE }),
  });
  if (!document.facets.includes(CONFIG_FACET)) await client.addFacetAt(document.path, CONFIG_FACET);
  const others = labelled.filter((d) => d.uid !== document.uid);
  return {
    path: document.path,
    created: existing === undefined,
    folders: mapping.mapping.length,
    readableBy: readers(await client.getAcl(document.uid), administrators),
    others: others.map((d) => d.path),
  };
}

/** `mapping download`: the mapping file a run would read, as it is stored. */
export async function downloadMapping(
  client: RepositoryClient,
  adminPath: string,
): Promise<{ path: string; content: Buffer }> {
  const document = await findMappingDocument(client, adminPath);
  return { path: document.path, content: await client.downloadBlob(document.uid) };
}
