import { throughProxy } from './route.js';
import { AuthenticationError, ConfigError } from '../../../common/errors.js';
import { SchemaRegistry, type SchemaDef } from '../../../common/nuxeo/schemas.js';
import type { Config } from '../../config/load.js';
import { findMappingDocuments, readMappingEntries, readers } from '../../job/intake/mapping-file.js';
import { mappingRules } from '../../job/intake/mapping-schema.js';
import type { MappingFile } from '../../job/intake/mapping-schema.js';
import { referenceOf } from '../../job/intake/substitute.js';
import {
  FOLDER_CHAIN,
  type Declaration,
  type RepositoryClient,
  type RepositoryReader,
} from '../../repository/client.js';
import { withoutCredentials } from '../../http-options.js';
import { Section } from './check.js';

/** What the repository's checks read: requests that change nothing. */
type DoctorRepository = RepositoryReader &
  Pick<
    RepositoryClient,
    'me' | 'capabilities' | 'declaration' | 'declaredSchemas' | 'permissionsAt' | 'operationAccepted'
  >;

const SET_UP = 'docs/nuxeo-setup.md';
const PACKAGE = `install this version's Nuxeo package (npm run nuxeo-package, ${SET_UP})`;
/** Permissions that let the job write properties and create archive-link folders (Nuxeo's Write group and above). */
const WRITES = new Set(['Write', 'ReadWrite', 'Everything']);

/**
 * The repository as storage.yaml reaches it: the account signs in, adminPath exists, every facet
 * of the feature is deployed with the schemas and fields this version writes, the mapping file
 * is found, valid and readable by administrators only, its `$` references name properties the
 * server declares, and the account may write in each mapped folder. Returns the mapping read,
 * for the ERP checks.
 */
export async function checkRepository(
  client: DoctorRepository,
  config: Config,
  registry: SchemaRegistry,
): Promise<{ section: Section; signedIn: boolean; mapping?: MappingFile }> {
  const section = new Section(`repository ${withoutCredentials(config.storage.url)}`);
  if (!(await signIn(section, client, throughProxy(config.storage.url, config.storage.proxy))))
    return { section, signedIn: false };
  await section.attempt(
    'the server version',
    `GET /api/v1/capabilities answers from Nuxeo 11.5 on: an older server is not supported (${SET_UP})`,
    () => checkVersion(section, client),
  );
  const { adminPath } = config.storage;
  await section.attempt(
    `adminPath ${adminPath}`,
    `create it with inheritance blocked (${SET_UP}), or fix adminPath in storage.yaml`,
    async () => {
      await client.getByPath(adminPath);
      section.pass(`adminPath ${adminPath} found`);
    },
  );
  for (const [facet, schemas] of featureFacets(registry))
    await section.attempt(`facet ${facet}`, PACKAGE, () => checkFacet(section, client, facet, schemas));
  await section.attempt(`the Automation chain ${FOLDER_CHAIN}`, PACKAGE, () => checkFolderChain(section, client));
  const mapping = await checkMapping(section, client, config, registry);
  if (mapping === undefined) return { section, signedIn: true };
  await section.attempt('the declared schemas', 'check that the account may read /api/v1/config/schemas', () =>
    checkReferences(section, client, mapping, registry),
  );
  for (const { path } of mapping.mapping)
    await section.attempt(`mapped folder ${path}`, 'create it, or fix its path in the mapping file', () =>
      checkFolder(section, client, path),
    );
  return { section, signedIn: true, mapping };
}

async function signIn(section: Section, client: DoctorRepository, route: string): Promise<boolean> {
  try {
    const me = await client.me();
    section.pass(`reachable, signed in as ${me.id}${route}`);
    return true;
  } catch (error) {
    if (error instanceof AuthenticationError)
      section.failed(
        'sign-in',
        error,
        'check auth in storage.yaml (user name and password, token, or OAuth client), or tls.caFile',
      );
    else section.failed('not reachable', error, 'check url and apiPath in storage.yaml, and that Nuxeo is up');
    section.skip('the other repository checks: they need the repository');
    return false;
  }
}

/** The LTS lines supported, and how each was checked (docs/nuxeo-setup.md, "Which LTS, checked how"). */
const SUPPORTED: Record<string, string> = {
  2021: 'checked against its source',
  2023: 'checked against its source',
  2025: 'checked against its documentation only (its new search service, Automation answering 400 to an invalid body)',
};

async function checkVersion(section: Section, client: DoctorRepository): Promise<void> {
  const { server } = await client.capabilities();
  const [name, version] = [String(server?.distributionName), String(server?.distributionVersion)];
  const line = version.split('.')[0];
  const where = `${SET_UP}, "Which LTS, checked how"`;
  if (name.toLowerCase() !== 'lts' || !Object.hasOwn(SUPPORTED, line))
    return section.fail(
      `Nuxeo ${name} ${version}: not an LTS this version supports`,
      `connect2erp supports Nuxeo LTS 2021, 2023 and 2025 (${where})`,
    );
  section.pass(`Nuxeo LTS ${version}: ${SUPPORTED[line]} (${where})`);
}

/** The feature's facets with their schemas: those the stock registry does not have. */
function featureFacets(registry: SchemaRegistry): Array<[string, SchemaDef[]]> {
  const stock = new SchemaRegistry();
  return [...registry.facets]
    .filter(([facet]) => !stock.facets.has(facet))
    .map(([facet, schemas]) => [facet, schemas.map((name) => registry.schemas.get(name) as SchemaDef)]);
}

async function checkFacet(
  section: Section,
  client: DoctorRepository,
  facet: string,
  schemas: SchemaDef[],
): Promise<void> {
  const declared = await client.declaration('facets', facet);
  if (declared === undefined) return section.fail(`facet ${facet} is not deployed`, PACKAGE);
  const declaredSchemas = declared.schemas ?? [];
  const gaps = schemas.flatMap((schema) => schemaGaps(schema, declaredSchemas));
  if (gaps.length > 0) return section.fail(`facet ${facet}: ${gaps.join('; ')}`, PACKAGE);
  section.pass(`facet ${facet} deployed (${schemas.map((s) => s.name).join(', ') || 'no schema'})`);
}

/** The package's chain that makes an archive-link folder in one request; a package older than the job lacks it. */
async function checkFolderChain(section: Section, client: DoctorRepository): Promise<void> {
  if (!(await client.operationInstalled(FOLDER_CHAIN)))
    return section.fail(
      `the Automation chain ${FOLDER_CHAIN} is not deployed: the package is older than this version, and each archive-link folder takes two requests more`,
      PACKAGE,
    );
  if (!(await client.operationAccepted(FOLDER_CHAIN)))
    return section.fail(
      `the Automation chain ${FOLDER_CHAIN} is deployed but refused to this user (a call is answered an empty 404): each archive-link folder takes two requests more`,
      `a REST binding of Automation (an automation-server 'binding' contribution) refuses it: allow the chain to the job's user (${SET_UP})`,
    );
  section.pass(`the Automation chain ${FOLDER_CHAIN} deployed, and run for this user`);
}

/** How the server's schema falls short of this version's: missing, another prefix, fields missing. */
function schemaGaps(schema: SchemaDef, declared: Declaration[]): string[] {
  const found = declared.find((d) => d.name === schema.name);
  if (found === undefined) return [`schema ${schema.name} missing`];
  if (found['@prefix'] !== schema.prefix)
    return [`schema ${schema.name} has prefix ${found['@prefix']}, not ${schema.prefix}`];
  const missing = [...schema.fields.keys()].filter((field) => !(field in found.fields));
  return missing.length === 0 ? [] : [`schema ${schema.name} lacks ${missing.join(', ')}`];
}

async function checkMapping(
  section: Section,
  client: DoctorRepository,
  config: Config,
  registry: SchemaRegistry,
): Promise<MappingFile | undefined> {
  const { adminPath, administrators } = config.storage;
  const upload = 'connect2erp mapping upload FILE';
  try {
    const found = await findMappingDocuments(client, adminPath);
    if (found.length === 0) {
      section.fail(`no mapping file under ${adminPath}`, `upload one: ${upload}`);
      return undefined;
    }
    if (found.length > 1) {
      section.fail(
        `several mapping files: ${found.map((d) => d.path).join(', ')}`,
        'keep one: remove the facet fct_erp_config_file_connect2erp from the others',
      );
      return undefined;
    }
    const [document] = found;
    const text = (await client.downloadBlob(document.uid)).toString('utf8');
    const { mapping, problems } = readMappingEntries(
      text,
      `repository:${document.path}`,
      mappingRules(config, registry),
    );
    if (problems.length > 0)
      section.fail(
        `mapping file ${document.path}: ${problems.length} problem(s): ${new ConfigError(problems).message}`,
        `fix it locally (connect2erp validate --mapping FILE), then ${upload}`,
      );
    else section.pass(`mapping file ${document.path} valid: ${mapping.mapping.length} folder(s) mapped`);
    const others = readers(await client.getAcl(document.uid), administrators);
    if (others.length > 0)
      section.fail(
        `mapping file readable by ${others.join(', ')}`,
        `only administrators should read it (spec §5.2): block inheritance on adminPath (${SET_UP})`,
      );
    else section.pass('mapping file readable by administrators only');
    return mapping;
  } catch (error) {
    section.failed('mapping file', error, `${upload}, then run doctor again`);
    return undefined;
  }
}

/**
 * `$` references to schemas this version does not ship (the customer's own) are checked against
 * the schemas the server declares: one that names no declared property would make every document
 * of its folder an intake error.
 */
async function checkReferences(
  section: Section,
  client: DoctorRepository,
  mapping: MappingFile,
  registry: SchemaRegistry,
): Promise<void> {
  const properties = new Set(
    mapping.mapping
      .flatMap((entry) => Object.values(entry.properties))
      .map((value) => referenceOf(value)?.split(/[./]/)[0])
      .filter((property): property is string => property?.includes(':') === true)
      .filter((property) => !registry.byPrefix.has(property.slice(0, property.indexOf(':')))),
  );
  if (properties.size === 0) return;
  const declared = await client.declaredSchemas();
  for (const property of properties) {
    const [prefix, field] = [property.slice(0, property.indexOf(':')), property.slice(property.indexOf(':') + 1)];
    // A schema without a prefix is named by its name (reference §1.1).
    const schema = declared.find((s) => s['@prefix'] === prefix || s.name === prefix);
    if (schema !== undefined && field in schema.fields)
      section.pass(`$${property} is a property of schema ${schema.name}`);
    else
      section.fail(
        schema === undefined
          ? `$${property}: no schema with prefix ${prefix}`
          : `$${property}: schema ${schema.name} has no field ${field}`,
        'fix the reference in the mapping file, or deploy the schema',
      );
  }
}

async function checkFolder(section: Section, client: DoctorRepository, path: string): Promise<void> {
  const permissions = await client.permissionsAt(path);
  if (permissions.some((permission) => WRITES.has(permission))) return section.pass(`may write in ${path}`);
  section.fail(`may not write in ${path}`, `give the account of storage.yaml ReadWrite on ${path} (${SET_UP})`);
}
