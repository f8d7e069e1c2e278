import { parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { ConfigError, NotFoundError, type ConfigProblem } from '../../../common/errors.js';
import type { RepositoryReader } from '../../repository/client.js';
import { AnswerTooLargeError } from '../../repository/transport.js';
import { ANSWER_MAX_TEXT } from '../../bounded-body.js';
import type { AclEntity, RepositoryDocument } from '../../repository/document.js';
import { nxqlString } from '../../nxql/literal.js';
import { mappingSchema, PATHED, type MappingFile, type MappingRules } from './mapping-schema.js';

export const CONFIG_FACET = 'fct_erp_config_file_connect2erp';
/** The mapping file's title, the last segment of its path (spec §4.1). */
export const CONFIG_TITLE = 'Connect to ERP Feature Configuration';
/**
 * What a check for Read accepts: Read, every permission that contains it, and Everything
 * (SecurityService.getPermissionsToCheck; the groups of permissions-contrib.xml in nuxeo-core,
 * collection-security-contrib.xml and document-routing-security-contrib.xml). Browse or
 * ReadProperties alone do not let a user read the file.
 */
const READ_PERMISSIONS = new Set([
  'Read',
  'ReadWrite',
  'ReadRemove',
  'ReadCanCollect',
  'DataVisualization',
  'Everything',
]);
const EVERYONE = 'Everyone';

export interface LoadedMapping extends MappingEntries {
  document: RepositoryDocument;
  /** Principals other than the administrators who can read the file (spec §5.2). */
  readableBy: string[];
}

/**
 * The documents under adminPath labelled as the mapping file, by a search (the job's way to find
 * it); when the search finds none, the document at the specification's own path
 * (`<adminPath>/Connect to ERP Feature Configuration`), if it is labelled: the search index lags
 * writes, and a file uploaded a moment ago is not in it yet.
 */
export async function findMappingDocuments(client: RepositoryReader, adminPath: string): Promise<RepositoryDocument[]> {
  const query = `SELECT * FROM Document WHERE ecm:mixinType = ${nxqlString(CONFIG_FACET)} AND ecm:path STARTSWITH ${nxqlString(adminPath)} AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0`;
  const found = (await client.search(query, { pageSize: 10 })).entries;
  if (found.length > 0) return found;
  const atPath = await client.getByPath(`${adminPath}/${CONFIG_TITLE}`).catch((error: unknown) => {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  });
  return atPath?.facets.includes(CONFIG_FACET) === true ? [atPath] : [];
}

/** The one mapping file under adminPath; none or several is a configuration problem. */
export async function findMappingDocument(client: RepositoryReader, adminPath: string): Promise<RepositoryDocument> {
  const found = await findMappingDocuments(client, adminPath);
  const problem = (message: string): ConfigError =>
    new ConfigError([{ file: `repository:${adminPath}`, path: '', message }]);
  if (found.length === 0)
    throw problem(
      `no document under adminPath carries the facet ${CONFIG_FACET}; upload the mapping file and label it (spec §4.1)`,
    );
  if (found.length > 1)
    throw problem(`several documents carry ${CONFIG_FACET}: ${found.map((d) => d.path).join(', ')}; keep one`);
  return found[0];
}

/**
 * Find, read and validate the mapping file, fresh on every run, so edits take effect at
 * the next run. Problems name the file by its repository path and the key path inside it.
 */
export async function loadMapping(
  client: RepositoryReader,
  options: { adminPath: string; administrators: string[]; rules: MappingRules },
): Promise<LoadedMapping> {
  const document = await findMappingDocument(client, options.adminPath);
  const file = `repository:${document.path}`;
  const text = await mappingText(client, document.uid, file);
  const entries = readMappingEntries(text, file, options.rules);
  const readableBy = readers(await client.getAcl(document.uid), options.administrators);
  return { document, ...entries, readableBy };
}

/** What is said of a mapping file larger than a run reads, in the repository or on disk. */
export const MAPPING_TOO_LARGE = `larger than ${ANSWER_MAX_TEXT}: a mapping file takes about a kilobyte per folder mapped`;

/** The mapping file's text; one too large to hold is a problem of the file, named, like any other. */
async function mappingText(client: RepositoryReader, uid: string, file: string): Promise<string> {
  try {
    return (await client.downloadBlob(uid)).toString('utf8');
  } catch (error) {
    if (!(error instanceof AnswerTooLargeError)) throw error;
    throw new ConfigError([{ file, path: '', message: MAPPING_TOO_LARGE }]);
  }
}

/** A mapping file's usable entries, and the problems of the others (each names its entry's index). */
interface MappingEntries {
  mapping: MappingFile;
  problems: ConfigProblem[];
}

/**
 * Reads a mapping file as a run uses it: an entry with a problem is left out, the others are kept,
 * so that one mistyped entry stops its own folder's intake and nothing else. A file with no usable
 * entry, or one that is not a mapping file at all, is a ConfigError.
 */
export function readMappingEntries(text: string, file: string, rules: MappingRules): MappingEntries {
  // A byte order mark, as some editors on Windows save JSON, is not part of the text.
  const json = parseJson(text.replace(/^\uFEFF/, ''), file);
  const schema = mappingSchema(rules);
  const result = schema.safeParse(json);
  if (result.success) return { mapping: result.data, problems: [] };
  const problems: ConfigProblem[] = result.error.issues.map((issue) => ({
    file,
    path: keyPath(json, issue.path),
    message: issue.message,
  }));
  const refused = new Set(result.error.issues.map((issue) => entryOf(issue.path)));
  // An issue about the file as a whole (not an object, no list) has no entry: nothing is usable.
  if (refused.has(undefined)) throw new ConfigError(problems);
  const entries = (json as { mapping: unknown[] }).mapping;
  if (refused.size === entries.length) throw new ConfigError(problems);
  // The entries left pass again: their problems were their own, and every problem between entries was found above.
  return { mapping: schema.parse({ mapping: entries.filter((_, i) => !refused.has(i)) }), problems };
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ConfigError([{ file, path: '', message: jsonSyntaxMessage(text) }]);
  }
}

/**
 * Where an issue is, as a person finds it in the file: an entry by its folder
 * (`mapping[/default-domain/workspaces/ERP/Invoices].properties.…`), by its place in the list
 * (from 0) when its path is missing or given twice.
 */
function keyPath(json: unknown, path: PropertyKey[]): string {
  const index = entryOf(path);
  if (index === undefined) return path.join('.');
  const entries = (json as { mapping: unknown[] }).mapping;
  const folder = PATHED.safeParse(entries[index]).data?.path;
  const unique = folder !== undefined && entries.filter((e) => PATHED.safeParse(e).data?.path === folder).length === 1;
  return [`mapping[${unique ? folder : index}]`, ...path.slice(2)].join('.');
}

/** The index of the entry an issue is about, or undefined when it is about the file as a whole. */
const entryOf = (path: PropertyKey[]): number | undefined =>
  path[0] === 'mapping' && typeof path[1] === 'number' ? path[1] : undefined;

/** A mapping file as `validate --mapping` and `mapping upload` take it: every entry usable. */
export function parseMapping(text: string, file: string, rules: MappingRules): MappingFile {
  const { mapping, problems } = readMappingEntries(text, file, rules);
  if (problems.length > 0) throw new ConfigError(problems);
  return mapping;
}

/**
 * A JSON syntax error with its line and column. Node's own parser names an offset for some errors
 * and none for others, so jsonc-parser, in strict JSON mode, finds the first one.
 */
function jsonSyntaxMessage(text: string): string {
  const errors: ParseError[] = [];
  parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const [first] = errors;
  const before = text.slice(0, first.offset).split('\n');
  const reason = printParseErrorCode(first.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return `not valid JSON at line ${before.length}, column ${before[before.length - 1].length + 1}: ${reason}`;
}

/**
 * Who may read the document besides the administrators, as Nuxeo decides (ACPImpl.getAccess): the
 * ACEs in order (the document's ACLs, then `inherited`), only those in effect; the first whose user
 * is the principal or Everyone and whose permission is one a Read check accepts decides, grant or
 * deny; none means no. A deny of another permission decides nothing for Read. Group membership
 * is not known here, so each principal is judged alone: a user who may read only through a
 * group is reported as that group.
 */
export function readers(acl: AclEntity, administrators: string[]): string[] {
  const aces = acl.acl
    .flatMap((list) => list.ace)
    .filter((ace) => (ace.status === undefined || ace.status === 'effective') && READ_PERMISSIONS.has(ace.permission));
  const principals = [...new Set(aces.map((ace) => ace.username))].filter((name) => !administrators.includes(name));
  return principals.filter(
    (name) => aces.find((ace) => ace.username === name || ace.username === EVERYONE)?.granted === true,
  );
}
