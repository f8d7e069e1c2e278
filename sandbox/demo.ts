import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import got, { type Got } from 'got';
import { loadConfig } from '../src/config/load.js';
import { configLocation, type ConfigLocation } from '../src/config/location.js';
import { CertificateStore } from '../src/content-server/signatures/certificates.js';
import { ContentServer } from '../src/content-server/server.js';
import { RepositoryClient } from '../src/repository/client.js';
import { createLogger } from '../src/log.js';
import { renderReport } from '../src/job/report/table.js';
import { runJob } from '../src/job/run.js';
import { ArchiveLinkCaller } from './erp/archivelink-client.js';
import { ErpSandbox } from './erp/server.js';
import { RepositorySandbox } from './repository/server.js';
import { PRODUCTION_SEARCH_LAG_MS } from './settings.js';
import { projectRoot } from '../common/project.js';

const PROJECT = projectRoot(import.meta.dirname);
const ADMIN = 'Administrator';
const CONFIG_TITLE = 'Connect to ERP Feature Configuration';
/** The mapped folders, the admin folder and the content server's storage folder (config/contentServer.yaml). */
const FOLDERS = ['admin', 'ERP', 'ERP/Barcode', 'ERP/Invoices', 'ERP/Workflow', 'sap-archive', 'sap-archive/Z1'];
const SAMPLES: Array<[string, string]> = [
  ['ERP/Invoices', 'invoice-4711.pdf'],
  ['ERP/Invoices', 'invoice-4712.pdf'],
  ['ERP/Barcode', 'scan-0001.pdf'],
  ['ERP/Workflow', 'approval-request.pdf'],
];

/** A repository path in a REST URL, each segment encoded (the demo's own, not the job's client). */
const pathSegments = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

/**
 * What the demo's user and administrator do by hand. `nx-es-sync: true` (ElasticSearchFilter) makes
 * each of their writes searchable before the answer: set-up and uploads are found by the next
 * search however far the index lags.
 */
function adminApi(baseUrl: string): Got {
  return got.extend({
    prefixUrl: `${baseUrl}/api/v1`,
    username: ADMIN,
    password: ADMIN,
    responseType: 'json',
    headers: { 'nx-es-sync': 'true' },
  });
}

/** Batch upload of one file; answers the reference a document property takes. */
async function uploadBlob(api: Got, name: string, mimeType: string, content: Buffer): Promise<Record<string, string>> {
  const { batchId } = await api.post('upload/').json<{ batchId: string }>();
  await api.post(`upload/${batchId}/0`, {
    body: content,
    headers: {
      'X-File-Name': encodeURIComponent(name),
      'X-File-Type': mimeType,
      'Content-Type': 'application/octet-stream',
    },
  });
  return { 'upload-batch': batchId, 'upload-fileId': '0' };
}

/** What an administrator does by hand with a REST client: folders, the mapping file, its label and ACL. */
export async function setUpRepository(
  baseUrl: string,
  mappingJson: string,
  adminPath = '/default-domain/workspaces/admin',
): Promise<void> {
  const api = adminApi(baseUrl);
  for (const folder of FOLDERS) {
    const parent = `/default-domain/workspaces/${folder}`.split('/').slice(0, -1).join('/');
    const name = folder.split('/').pop() as string;
    const exists = await api.get(`path${pathSegments(`${parent}/${name}`)}`, { throwHttpErrors: false });
    if (exists.statusCode === 404)
      await api.post(`path${pathSegments(parent)}`, {
        json: { 'entity-type': 'document', type: 'Workspace', name, properties: { 'dc:title': name } },
      });
  }
  // Only administrators may read the mapping file (spec §5.2).
  await api.post(`path${pathSegments(adminPath)}/@op/Document.BlockPermissionInheritance`, { json: { params: {} } });
  const configPath = `${adminPath}/${CONFIG_TITLE}`;
  const existing = await api.get(`path${pathSegments(configPath)}`, { throwHttpErrors: false });
  const uid =
    existing.statusCode === 200
      ? (existing.body as unknown as { uid: string }).uid
      : // Document.Create keeps the full title as the name; a REST POST would cut it to 24 characters.
        (
          await api
            .post(`path${pathSegments(adminPath)}/@op/Document.Create`, {
              json: { params: { type: 'File', name: CONFIG_TITLE, properties: { 'dc:title': CONFIG_TITLE } } },
            })
            .json<{ uid: string }>()
        ).uid;
  const blob = await uploadBlob(
    api,
    'connector_configuration_connect_to_erp.json',
    'application/json',
    Buffer.from(mappingJson),
  );
  await api.put(`id/${uid}`, { json: { 'entity-type': 'document', properties: { 'file:content': blob } } });
  // Spec §4.1, exactly: label the configuration document by its URL-encoded path.
  await got.post(`${baseUrl}/api/v1/path${pathSegments(configPath)}/@op/Document.AddFacet`, {
    headers: {
      'Content-Type': 'application/json',
      properties: '*',
      'nx-es-sync': 'true',
      Authorization: `Basic ${Buffer.from(`${ADMIN}:${ADMIN}`).toString('base64')}`,
    },
    json: { params: { facet: 'fct_erp_config_file_connect2erp' } },
  });
}

/** A user uploads a file into a folder, as the web UI would. */
export async function uploadFile(
  baseUrl: string,
  folderPath: string,
  name: string,
  content = Buffer.from(`%PDF-1.4 sample ${name}`),
): Promise<string> {
  const api = adminApi(baseUrl);
  const blob = await uploadBlob(api, name, 'application/pdf', content);
  const created = await api
    .post(`path${pathSegments(folderPath)}`, {
      json: { 'entity-type': 'document', type: 'File', name, properties: { 'dc:title': name, 'file:content': blob } },
    })
    .json<{ uid: string }>();
  return created.uid;
}

/** What a user does in the web UI for the documents waiting in PENDING_INPUT. */
async function fillMissingValues(baseUrl: string): Promise<void> {
  const api = adminApi(baseUrl);
  const values: Array<[string, Record<string, string>]> = [
    ['ERP/Invoices/invoice-4711/invoice-4711.pdf', { 'erpCreateALDocument:erpObjectId': '100019000000222023' }],
    ['ERP/Barcode/scan-0001.pdf', { 'erpBarcode:barcode': 'BC-0001' }],
  ];
  for (const [path, properties] of values) {
    await api.put(`path${pathSegments(`/default-domain/workspaces/${path}`)}`, {
      json: { 'entity-type': 'document', properties },
    });
  }
}

/** A configuration folder for the job that points at the sandbox. */
export function writeDemoConfig(dir: string, baseUrl: string, erpUrl: string): string {
  const configDir = join(dir, 'config');
  mkdirSync(configDir, { recursive: true });
  const storage = readFileSync(join(PROJECT, 'config', 'storage.yaml'), 'utf8').replace(
    /^url: .*$/m,
    `url: ${baseUrl}`,
  );
  writeFileSync(join(configDir, 'storage.yaml'), storage);
  const erp = readFileSync(join(PROJECT, 'config', 'erpHttp.yaml'), 'utf8').replaceAll('http://127.0.0.1:8081', erpUrl);
  writeFileSync(join(configDir, 'erpHttp.yaml'), erp);
  cpSync(join(PROJECT, 'config', 'contentServer.yaml'), join(configDir, 'contentServer.yaml'));
  cpSync(join(PROJECT, 'jobs'), join(dir, 'jobs'), { recursive: true });
  return configDir;
}

/**
 * The loop's other end: `connect2erp serve` answers the ERP sandbox as SAP's ArchiveLink runtime
 * calls it — OAC0's connection test, its certificate (approved as an administrator does), every
 * linked document opened with a signed URL and compared with the repository's bytes, and the
 * RSCMST-like sequence.
 */
async function openFromSap(
  location: Required<ConfigLocation>,
  baseUrl: string,
  erp: ErpSandbox,
  print: (line: string) => void,
): Promise<void> {
  const config = loadConfig(location, { contentServer: true });
  const log = createLogger({ level: 'warn' });
  const settings = config.contentServer as NonNullable<typeof config.contentServer>;
  const server = new ContentServer(
    { storage: config.storage, server: { ...settings, listen: { host: '127.0.0.1', port: 0 } }, version: 'demo' },
    log,
  );
  const { port } = await server.start();
  try {
    const caller = new ArchiveLinkCaller(`http://127.0.0.1:${port}${settings.pathPrefix}/S4H`, 'Z1');
    print(`\n=== SAP opens the linked documents through connect2erp serve (port ${port}) ===`);
    print(`OAC0 connection test (serverInfo): HTTP ${(await caller.serverInfo()).status}`);
    print(`OAC0 "send certificate" (putCert): HTTP ${(await caller.putCert()).status}`);
    const store = new CertificateStore(new RepositoryClient(config.storage, log), config.storage.adminPath);
    const [certificate] = await store.list();
    await store.setStatus(certificate, 'approved');
    print(`an administrator approves it: connect2erp certs approve ${certificate.name}`);
    const api = adminApi(baseUrl);
    for (const link of erp.tables.links) {
      const opened = await caller.get(link.ARC_DOC_ID);
      const stored = (await api.get(`id/${link.ARC_DOC_ID}/@blob/file:content`, { responseType: 'buffer' })).body;
      print(
        `${link.SAP_OBJECT} ${link.OBJECT_ID}: opened ${link.ARC_DOC_ID} from ${link.ARCHIV_ID}, HTTP ${opened.status}, ${opened.body.length} bytes; the repository's own bytes: ${String(opened.body.equals(stored))}`,
      );
    }
    const steps = await caller.checkSequence();
    print(`RSCMST-like sequence: ${steps.map((s) => `${s.step} ${s.status}`).join(', ')}`);
    print(`every step as SAP expects: ${String(steps.every((s) => s.ok))}`);
  } finally {
    await server.stop();
  }
}

/** `npm run demo`: the whole feature on the sandbox, with a dry run first. */
export async function runDemo(options: { dataDir?: string }, print: (line: string) => void): Promise<number> {
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'connect2erp-demo-'));
  const sandbox = new RepositorySandbox({ dataDir: join(dir, 'repository'), searchLagMs: PRODUCTION_SEARCH_LAG_MS });
  const baseUrl = await sandbox.start();
  const erp = new ErpSandbox();
  const erpUrl = await erp.start();
  try {
    print(`repository sandbox at ${baseUrl}, state in ${dir}`);
    print(
      `its searches come from an index that lags writes by ${PRODUCTION_SEARCH_LAG_MS} ms, as a stock Nuxeo's Elasticsearch; between runs it catches up`,
    );
    await setUpRepository(
      baseUrl,
      readFileSync(join(PROJECT, 'config', 'connector_configuration_connect_to_erp.json'), 'utf8'),
    );
    for (const [folder, name] of SAMPLES) await uploadFile(baseUrl, `/default-domain/workspaces/${folder}`, name);
    print(`uploaded ${SAMPLES.length} sample files; the mapping file is labelled with the request of spec §4.1`);
    process.env.NUXEO_PASSWORD ??= ADMIN;
    process.env.CONTENT_SERVER_PASSWORD ??= ADMIN;
    process.env.SAP_PASSWORD ??= 'sandbox';
    const location = configLocation({ config: writeDemoConfig(dir, baseUrl, erpUrl) });
    const log = createLogger({ level: 'warn' });
    // Scheduled runs come minutes apart: by the next one, the index has everything the last one wrote.
    const run = async (dryRun: boolean) => {
      sandbox.index.catchUp();
      return runJob({ location, dryRun }, log);
    };
    print('\n=== dry run: what the job would do ===');
    print(renderReport(await run(true)));
    print('\n=== run ===');
    const report = await run(false);
    print(renderReport(report));
    print('\n=== a user fills in the invoice number and the bar code; the next run links them ===');
    await fillMissingValues(baseUrl);
    print(renderReport(await run(false)));
    print('\n=== one more run: nothing left to do ===');
    print(renderReport(await run(false)));
    print('\n=== what landed in the ERP sandbox ===');
    print(JSON.stringify(erp.tables, null, 2));
    await openFromSap(location, baseUrl, erp, print);
    return report.exitCode;
  } finally {
    await erp.stop();
    await sandbox.stop();
  }
}
