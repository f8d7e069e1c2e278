import { DocumentError, NotFoundError, NotServedError, TransientError } from '../../common/errors.js';
import type { StorageConfig } from '../config/storage-schema.js';
import type { Logger } from '../log.js';
import type { SchemaRegistry } from '../../common/nuxeo/schemas.js';
import type { AclEntity, RepositoryDocument, SearchPage } from './document.js';
import type { Readable } from 'node:stream';
import { RepositoryTransport, type OpenAnswer } from './transport.js';

/** A batch-upload reference: what a blob property is set to so that it takes the uploaded file. */
export interface UploadReference {
  'upload-batch': string;
  'upload-fileId': string;
}

/** A read's answer, or undefined when the repository has no such document (404). */
export async function unlessMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** Bytes `from` to `to`, both included (HTTP's Range). */
export interface ByteRange {
  from: number;
  to: number;
}

/** A PUT was accepted but some properties did not stick (their facet is missing on the server). */
export class PropertiesDroppedError extends DocumentError {
  constructor(
    readonly document: RepositoryDocument,
    readonly dropped: string[],
  ) {
    super(
      `the repository accepted but did not store ${dropped.join(', ')} on ${document.path}: is the facet declared on the server?`,
      { target: document.path },
    );
  }
}

const ALL_PROPERTIES = { properties: '*' };
/** An id no document has: Nuxeo's ids are random (version 4) UUIDs, never the nil one. */
const NO_DOCUMENT = '00000000-0000-0000-0000-000000000000';

/**
 * The Automation chain of the repository package (nuxeo-package/OSGI-INF/connect2erp-operations-contrib.xml)
 * that makes an archive-link folder and moves its file in, and the chain parameters it reads.
 */
export const FOLDER_CHAIN = 'connect2erp.PlaceInArchiveLinkFolder';
const FOLDER_CHAIN_PARAMS = {
  name: 'folderName',
  properties: 'folderProperties',
  useCaseFacet: 'useCaseFacet',
  values: 'folderValues',
  file: 'fileId',
} as const;

/** An archive-link folder to create: its name and dublincore properties, then its use-case facet (besides fct_erp_http_content) and the values of both. */
export interface NewFolder {
  name: string;
  properties: Record<string, unknown>;
  useCaseFacet: string;
  values: Record<string, unknown>;
}

function sameValue(sent: unknown, stored: unknown): boolean {
  if (sent === null || sent === undefined)
    return stored === null || stored === undefined || (Array.isArray(stored) && stored.length === 0);
  if (typeof sent === 'string' && typeof stored === 'string' && sent !== stored) {
    const a = Date.parse(sent);
    return !Number.isNaN(a) && /^\d{4}-\d{2}-\d{2}/.test(sent) && a === Date.parse(stored);
  }
  return JSON.stringify(sent) === JSON.stringify(stored);
}

/**
 * The keys of `sent` whose values `document`, as the repository answered it after that write, does
 * not hold as sent: the real server drops a property whose facet it does not know without an error.
 */
export function notStored(document: RepositoryDocument, sent: Record<string, unknown>): string[] {
  return Object.keys(sent).filter((key) => !sameValue(sent[key], document.properties[key]));
}

/** What the job's phases and the operator commands may call on the repository: reads only; every write goes through the writer (src/ports). */
export type RepositoryReader = Pick<
  RepositoryClient,
  'search' | 'getById' | 'getByPath' | 'getAcl' | 'downloadBlob' | 'openBlob' | 'operationInstalled'
>;

/** A schema (`name`, `@prefix`, `fields`) or a facet (`name`, `schemas`) as `config/…` answers it. */
export interface Declaration {
  name: string;
  '@prefix'?: string;
  fields: Record<string, unknown>;
  schemas?: Declaration[];
}

/** The repository operations the job uses, over REST and Automation. */
export class RepositoryClient {
  private readonly http: RepositoryTransport;
  private readonly headerOf = new Map<string, string>();

  /** `schemas` names the schemas of the properties the job writes, so an update asks back only those. */
  constructor(
    private readonly config: StorageConfig,
    log: Logger,
    private readonly schemas?: SchemaRegistry,
  ) {
    this.http = new RepositoryTransport(config, log);
  }

  /**
   * NXQL search; `pageSize` is always sent, because without it the server silently caps at 1000.
   * `reads` names the properties the caller reads from the documents found: only their schemas
   * come back. A page of every schema of every document is several times larger, and the job
   * parses it and keeps it while the page is worked on.
   */
  async search(
    query: string,
    page: { pageSize?: number; offset?: number; reads?: string[] } = {},
  ): Promise<SearchPage> {
    const headers = page.reads === undefined ? ALL_PROPERTIES : { properties: this.schemasOf(page.reads) };
    const params: Record<string, string | number> = { query, pageSize: page.pageSize ?? this.config.pageSize };
    if (page.offset) params.offset = page.offset;
    return this.http.json({
      what: 'search',
      method: 'GET',
      path: 'search/execute',
      query: params,
      headers,
      pageWide: true,
    });
  }

  /** `schemas`: only these schemas' properties come back (every one by default). */
  async getById(uid: string, schemas = '*'): Promise<RepositoryDocument> {
    return this.http.json({
      what: `read ${uid}`,
      method: 'GET',
      path: `id/${encodeURIComponent(uid)}`,
      headers: { properties: schemas },
    });
  }

  async getByPath(path: string): Promise<RepositoryDocument> {
    return this.http.json({
      what: `read ${path}`,
      method: 'GET',
      path: `path${encodePath(path)}`,
      headers: ALL_PROPERTIES,
    });
  }

  async getAcl(uid: string): Promise<AclEntity> {
    return this.http.json({
      what: `read the ACL of ${uid}`,
      method: 'GET',
      path: `id/${encodeURIComponent(uid)}/@acl`,
    });
  }

  /**
   * A document's main blob (file:content) as it streams, or a byte range of it (Nuxeo's DownloadServiceImpl answers a single
   * `Range` with 206); the caller reads or destroys the body.
   */
  async openBlob(uid: string, range?: ByteRange): Promise<OpenAnswer> {
    return this.http.open({
      what: `download the content of ${uid}`,
      method: 'GET',
      path: `id/${encodeURIComponent(uid)}/@blob/file:content`,
      headers: range === undefined ? undefined : { range: `bytes=${range.from}-${range.to}` },
    });
  }

  /** The account the requests are made with, as the server knows it (`GET /api/v1/me`). */
  /**
   * The server's distribution (`GET /api/v1/capabilities`, since 11.5: CapabilitiesObject and
   * CapabilitiesJsonWriter, nuxeo/nuxeo 2021 and 2023; documented for 2025), e.g. `lts` `2023.12`.
   */
  async capabilities(): Promise<{ server?: { distributionName?: string; distributionVersion?: string } }> {
    return this.http.json({ what: 'read the server capabilities', method: 'GET', path: 'capabilities' });
  }

  async me(): Promise<{ id: string; isAdministrator?: boolean }> {
    return this.http.json({ what: 'read the signed-in user', method: 'GET', path: 'me' });
  }

  /**
   * A schema or a facet as the server declares it (`config/schemas/{name}`, `config/facets/{name}`),
   * or undefined when it has none: Nuxeo answers an unknown name with 204 and no body.
   */
  async declaration(kind: 'schemas' | 'facets', name: string): Promise<Declaration | undefined> {
    const body = await this.http.download({
      what: `read the declaration of ${name}`,
      method: 'GET',
      path: `config/${kind}/${encodeURIComponent(name)}`,
    });
    return body.length === 0 ? undefined : (JSON.parse(body.toString('utf8')) as Declaration);
  }

  /** Every schema the server declares (`config/schemas`: a bare array). */
  async declaredSchemas(): Promise<Declaration[]> {
    return this.http.json({ what: 'read the declared schemas', method: 'GET', path: 'config/schemas' });
  }

  /** What the account may do on the document at `path` (the `permissions` enricher). */
  async permissionsAt(path: string): Promise<string[]> {
    // The enricher always answers, with an empty list for an account that may do nothing there.
    const document = await this.http.json<{ contextParameters: { permissions: string[] } }>({
      what: `read the permissions on ${path}`,
      method: 'GET',
      path: `path${encodePath(path)}`,
      headers: { properties: 'dublincore', 'enrichers-document': 'permissions' },
    });
    return document.contextParameters.permissions;
  }

  /** The children of a folder, every page of them (`@children` reads the database, not the search index). */
  async children(uid: string): Promise<RepositoryDocument[]> {
    const documents: RepositoryDocument[] = [];
    let page: SearchPage;
    let pageIndex = 0;
    do {
      page = await this.http.json<SearchPage>({
        what: `list the children of ${uid}`,
        method: 'GET',
        path: `id/${encodeURIComponent(uid)}/@children`,
        query: { pageSize: this.config.pageSize, currentPageIndex: pageIndex++ },
        headers: ALL_PROPERTIES,
      });
      documents.push(...page.entries);
    } while (page.isNextPageAvailable);
    return documents;
  }

  async downloadBlob(uid: string, xpath = 'file:content'): Promise<Buffer> {
    return this.http.download({
      what: `download ${xpath} of ${uid}`,
      method: 'GET',
      path: `id/${encodeURIComponent(uid)}/@blob/${xpath}`,
    });
  }

  /**
   * Spec §4.1, exactly: Document.AddFacet on the document's URL-encoded path, with the
   * `properties: *` header the specification shows.
   */
  async addFacetAt(path: string, facet: string): Promise<void> {
    await this.http.discard({
      what: `add facet ${facet} to ${path}`,
      method: 'POST',
      path: `path${encodePath(path)}/@op/Document.AddFacet`,
      json: { params: { facet } },
      headers: ALL_PROPERTIES,
    });
  }

  /** One Automation call for many documents (`docs:` input); the server answers nothing (void). */
  async addFacet(uids: string[], facet: string): Promise<void> {
    await this.http.discard({
      what: `add facet ${facet}`,
      method: 'POST',
      path: 'automation/Document.AddFacet',
      json: { input: `docs:${uids.join(',')}`, params: { facet } },
      headers: { 'x-nxvoidoperation': 'true' },
      pageWide: true,
    });
  }

  /**
   * Partial update with optimistic locking. The real server drops, without error, any
   * property whose facet the document lacks, so the answer is compared with what was sent.
   * The answer carries only the schemas written: rendering every schema of every document
   * costs the server and the job more than the write itself.
   */
  async update(
    doc: { uid: string; changeToken?: string | null },
    properties: Record<string, unknown>,
  ): Promise<RepositoryDocument> {
    const json: Record<string, unknown> = { 'entity-type': 'document', uid: doc.uid, properties };
    if (doc.changeToken) json.changeToken = doc.changeToken;
    const updated = await this.http.json<RepositoryDocument>({
      what: `update ${doc.uid}`,
      method: 'PUT',
      path: `id/${encodeURIComponent(doc.uid)}`,
      json,
      headers: { properties: this.schemasOf(Object.keys(properties)) },
    });
    const dropped = notStored(updated, properties);
    if (dropped.length > 0) throw new PropertiesDroppedError(updated, dropped);
    return updated;
  }

  /**
   * The `properties` header naming the schemas of `keys` (`file:content.name` is in file:content's);
   * every schema when one is unknown. Kept per set of keys: a run writes a handful of sets, each
   * twice a document.
   */
  private schemasOf(keys: string[]): string {
    const asked = keys.join('\n');
    let header = this.headerOf.get(asked);
    if (header === undefined) {
      header = schemaNames(keys, this.schemas);
      this.headerOf.set(asked, header);
    }
    return header;
  }

  /**
   * Create a child with exactly this name (Automation's Document.Create; REST's POST cuts names
   * to 24 characters). A sibling of the same name makes the repository add a suffix instead of
   * failing: callers compare the name they get. Never retried.
   */
  async createNamed(
    parentUid: string,
    input: { type: string; name: string; properties?: Record<string, unknown> },
  ): Promise<RepositoryDocument> {
    const properties = input.properties === undefined ? {} : { properties: withoutNulls(input.properties) };
    return this.http.json({
      what: `create ${input.name}`,
      method: 'POST',
      path: `id/${encodeURIComponent(parentUid)}/@op/Document.Create`,
      json: { params: { type: input.type, name: input.name, ...properties } },
      headers: ALL_PROPERTIES,
      once: true,
    });
  }

  /** Stream a file into a new upload batch; the reference is what a blob property is set to. */
  async upload(content: Readable, file: { name: string; mimeType: string }): Promise<UploadReference> {
    return this.uploadInto(await this.newBatch(), content, file);
  }

  /** A new, empty upload batch. */
  async newBatch(): Promise<string> {
    const { batchId } = await this.http.json<{ batchId: string }>({
      what: 'open an upload batch',
      method: 'POST',
      path: 'upload/',
    });
    return batchId;
  }

  /** Stream a file into a batch already opened, as its file 0. */
  async uploadInto(
    batchId: string,
    content: Readable,
    file: { name: string; mimeType: string },
  ): Promise<UploadReference> {
    await this.http.discard({
      what: `upload ${file.name}`,
      method: 'POST',
      path: `upload/${encodeURIComponent(batchId)}/0`,
      headers: {
        'content-type': 'application/octet-stream',
        'x-file-name': encodeURIComponent(file.name),
        'x-file-type': file.mimeType,
      },
      stream: content,
    });
    return { 'upload-batch': batchId, 'upload-fileId': '0' };
  }

  /**
   * Set properties without reading them back (a blob set from an upload comes back as the blob);
   * with the document's `changeToken`, a change made meanwhile by someone else is a 409.
   */
  async setProperties(uid: string, properties: Record<string, unknown>, changeToken?: string | null): Promise<void> {
    await this.http.discard({
      what: `update ${uid}`,
      method: 'PUT',
      path: `id/${encodeURIComponent(uid)}`,
      json: { 'entity-type': 'document', uid, properties, ...(changeToken ? { changeToken } : {}) },
      headers: { properties: this.schemasOf(Object.keys(properties)) },
    });
  }

  /** Document.RemoveFacet: the facet and its schemas' values go (`unlabel`). */
  async removeFacet(uid: string, facet: string): Promise<void> {
    await this.http.discard({
      what: `remove facet ${facet} from ${uid}`,
      method: 'POST',
      path: `id/${encodeURIComponent(uid)}/@op/Document.RemoveFacet`,
      json: { params: { facet } },
    });
  }

  /** Into the trash (Document.Trash, Nuxeo 10.2 and later): an administrator can restore it. */
  async trash(uid: string): Promise<void> {
    await this.http.discard({
      what: `trash ${uid}`,
      method: 'POST',
      path: `id/${encodeURIComponent(uid)}/@op/Document.Trash`,
      json: { params: {} },
    });
  }

  /** Deleted for good, with its children. */
  async remove(uid: string): Promise<void> {
    await this.http.discard({ what: `delete ${uid}`, method: 'DELETE', path: `id/${encodeURIComponent(uid)}` });
  }

  /** Whether the server has this Automation operation or chain (`GET automation/<id>` answers its description, or 404). */
  async operationInstalled(id: string): Promise<boolean> {
    const described = await unlessMissing(
      this.http.json<unknown>({
        what: `look up operation ${id}`,
        method: 'GET',
        path: `automation/${encodeURIComponent(id)}`,
      }),
    );
    return described !== undefined;
  }

  /**
   * Whether the server runs this operation or chain for the signed-in user. A REST binding of
   * Automation may refuse a call (an empty 404, ExecutableResource.doPost) while the description
   * answers (`operationInstalled`). Asked with an input no document has (the nil UUID, which Nuxeo
   * never gives): a call let through fails on its input before anything is written, with the
   * server's error entity.
   */
  async operationAccepted(id: string): Promise<boolean> {
    const failure = await this.http
      .json<unknown>({
        what: `call operation ${id} on no document`,
        method: 'POST',
        path: `automation/${encodeURIComponent(id)}`,
        json: { input: `doc:${NO_DOCUMENT}`, params: {} },
        once: true,
      })
      .catch((error: unknown) => error);
    if (failure instanceof TransientError) throw failure;
    return !(failure instanceof NotServedError);
  }

  /**
   * The repository package's chain (FOLDER_CHAIN): a folder created in `parentUid` with its facets
   * and values, and the file moved into it, in one request and one transaction. Answers the file
   * as moved. Never retried: a lost answer must not create a second folder.
   */
  async placeInNewFolder(fileUid: string, parentUid: string, folder: NewFolder): Promise<RepositoryDocument> {
    const params: Record<string, unknown> = {
      [FOLDER_CHAIN_PARAMS.name]: folder.name,
      [FOLDER_CHAIN_PARAMS.properties]: withoutNulls(folder.properties),
      [FOLDER_CHAIN_PARAMS.useCaseFacet]: folder.useCaseFacet,
      [FOLDER_CHAIN_PARAMS.values]: withoutNulls(folder.values),
      [FOLDER_CHAIN_PARAMS.file]: fileUid,
    };
    return this.http.json({
      what: `create the folder ${folder.name} and move ${fileUid} into it`,
      method: 'POST',
      path: `automation/${FOLDER_CHAIN}`,
      json: { input: `doc:${parentUid}`, params },
      headers: ALL_PROPERTIES,
      once: true,
    });
  }

  async move(uid: string, targetUid: string): Promise<RepositoryDocument> {
    return this.http.json({
      what: `move ${uid}`,
      method: 'POST',
      path: `id/${encodeURIComponent(uid)}/@op/Document.Move`,
      json: { params: { target: targetUid } },
      headers: ALL_PROPERTIES,
    });
  }
}

/** The schemas of `keys`, comma-separated, or `*` when one is unknown. */
function schemaNames(keys: string[], schemas: SchemaRegistry | undefined): string {
  const names = new Set<string>();
  for (const key of keys) {
    const name = schemas?.property(key.split(/[./]/)[0])?.schema.name;
    if (name === undefined) return '*';
    names.add(name);
  }
  return [...names].join(',');
}

/**
 * A new folder's properties as a chain parameter: JsonNodeToProperties reads a JSON null as the
 * text "null", so a value left unset is left out (on a new document it is unset anyway).
 */
function withoutNulls(properties: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== null && value !== undefined));
}

/** Each path segment is URL-encoded (spaces and all), the slashes kept. */
function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
