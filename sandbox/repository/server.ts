import { NUXEO_TOKEN_PATH, NuxeoTokens } from './oauth2.js';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Faults } from '../faults.js';
import { basicCredentials, close, listen, readBody, sendEmpty, sendJson } from '../http.js';
import { EVERYONE, KNOWN_PERMISSIONS } from './acl.js';
import { configAnswer } from './config-endpoint.js';
import { OPERATIONS, type OperationResult } from './automation.js';
import { loadChains, runChain, type Chain } from './chains.js';
import { type SortKey } from './query.js';
import { SearchIndex } from './search-index.js';
import { renderAcls, renderDocument, renderException, renderPage, type SchemaSelection } from './render.js';
import { FEATURE_CONTRIBUTION, SchemaRegistry } from '../../common/nuxeo/schemas.js';
import { RepositoryError, Store, type Actor, type StoredBlob, type StoredDoc, type User } from './store.js';
import { Batches } from './uploads.js';
import { sendWebUiFile } from './web-ui-files.js';

export interface RepositorySandboxOptions {
  host?: string;
  port?: number;
  /** Keep state in this folder across restarts; in memory when absent. */
  dataDir?: string;
  /** The LTS version it answers as (`GET /api/v1/capabilities`); 2023 by default. */
  version?: string;
  /** Users besides `Administrator`/`Administrator`. */
  users?: Record<string, User>;
  /** How long a write takes to reach the search index (see SearchIndex); 0: at once. */
  searchLagMs?: number;
  /** `nuxeo.pageprovider.default-max-page-size`: 1000 on a stock server (core-query-properties.xml). */
  maxPageSize?: number;
  /** A folder served at `/nuxeo/ui/` to signed-in users, as Nuxeo serves Web UI's files. */
  webUiDir?: string;
  /**
   * Facets of the feature this server lacks, with their schemas: a Nuxeo where the package is not,
   * or not wholly, deployed. Adding one to a document fails as on such a server.
   */
  undeployedFacets?: string[];
  /** Automation chains of the package this server lacks: a Nuxeo with an older package. */
  undeployedChains?: string[];
  /**
   * Automation chains a REST binding refuses to the caller (an automation-server `binding`
   * contribution: disabled, administrators only, some groups only). AutomationServer.accept is asked
   * by ExecutableResource.doPost alone: a call is answered an empty 404 (ResponseHelper.notFound),
   * the chain's description (GET) as usual. Nuxeo 2021 and 2023 alike.
   */
  refusedChains?: string[];
}

/** The users made over REST, in a data folder. */
const USERS_FILE = 'users.json';

const DEFAULT_USERS: Record<string, User> = {
  Administrator: { password: 'Administrator', groups: ['administrators'] },
};
const GROUPS = new Set(['administrators', 'members']);
/**
 * `nuxeo.server.http.maxHttpHeaderSize=8192` (common-base/nuxeo.defaults), Tomcat's buffer for the
 * request line and the headers together (Http11InputBuffer): a GET whose query string fills it is
 * refused with a 400 and Tomcat's own HTML page (Http11Processor, ErrorReportValve with
 * showReport=false), not a Nuxeo JSON error.
 */
const MAX_HTTP_HEADER_SIZE = 8192;

function headerSize(req: IncomingMessage): number {
  let size = Buffer.byteLength(`${String(req.method)} ${String(req.url)} HTTP/1.1\r\n`) + 2;
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    size += Buffer.byteLength(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`);
  return size;
}

function tooLarge(res: ServerResponse): void {
  res.writeHead(400, { 'Content-Type': 'text/html;charset=utf-8', Connection: 'close' });
  res.end(
    '<!doctype html><html lang="en"><head><title>HTTP Status 400 – Bad Request</title></head><body><h1>HTTP Status 400 – Bad Request</h1></body></html>',
  );
}

/** `org.nuxeo.elasticsearch.provider.maxResultWindow`: Elasticsearch's 10,000 (ElasticSearchNxqlPageProvider). */
const MAX_RESULT_WINDOW = 10_000;

/** A Nuxeo-compatible repository server (REST API v1 subset) for the demo and the tests. */
export class RepositorySandbox {
  readonly store: Store;
  readonly index: SearchIndex;
  readonly faults = new Faults();
  private readonly users: Record<string, User>;
  /** `nuxeo.pageprovider.default-max-page-size`. */
  private readonly maxPageSize: number;
  /** The LTS version it answers as. */
  private readonly version: string;
  private readonly tokens = new Map<string, { user: string; key: string }>();
  /** OAuth 2.0 client credentials: the `oauth2Clients` directory, the token endpoint, bearer tokens. */
  readonly oauth2 = new NuxeoTokens((name) => this.users[name] !== undefined);
  private readonly batches = new Batches();
  /** The package's Automation chains (its OSGI-INF components). */
  private readonly chains: Map<string, Chain>;
  private server?: Server;
  private base = '';

  constructor(private readonly options: RepositorySandboxOptions = {}) {
    const registry = new SchemaRegistry();
    registry.loadContribution(FEATURE_CONTRIBUTION);
    for (const facet of options.undeployedFacets ?? []) registry.removeFacet(facet);
    this.chains = loadChains(dirname(FEATURE_CONTRIBUTION));
    for (const chain of options.undeployedChains ?? []) this.chains.delete(chain);
    this.store = new Store(registry, options.dataDir);
    this.index = new SearchIndex(this.store, options.searchLagMs);
    this.users = { ...DEFAULT_USERS, ...options.users, ...this.savedUsers() };
    this.maxPageSize = options.maxPageSize ?? 1000;
    this.version = options.version ?? '2023.0';
  }

  /** Returns the base URL, e.g. `http://127.0.0.1:8080/nuxeo`. */
  async start(): Promise<string> {
    // Node's own limit (16 KB, then 431) above Tomcat's, so that the check in `handle` answers as Tomcat does.
    const server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => void this.handle(req, res));
    this.server = server;
    const address = await listen(server, this.options.port ?? 0, this.options.host ?? '127.0.0.1');
    this.base = `http://${address.address}:${address.port}/nuxeo`;
    return this.base;
  }

  async stop(): Promise<void> {
    await close(this.server as Server);
  }

  /** An actor for in-process setup code (tests, demo), with the same checks as HTTP callers. */
  actor(name = 'Administrator'): Actor {
    const user = this.users[name];
    const principals = new Set([name, ...user.groups, EVERYONE]);
    return { name, principals, isAdministrator: user.groups.includes('administrators') };
  }

  private principalNames(): Set<string> {
    return new Set([
      ...Object.keys(this.users),
      ...GROUPS,
      ...Object.values(this.users).flatMap((u) => u.groups),
      EVERYONE,
    ]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (headerSize(req) > MAX_HTTP_HEADER_SIZE) return tooLarge(res);
    try {
      if (await this.faults.apply(req, res)) return;
      // ElasticSearchFilter: either header, `true` in any case, indexes the request's writes before it answers.
      const sync = [req.headers['nx-es-sync'], req.headers.nx_es_sync].some(
        (value) => String(value).toLowerCase() === 'true',
      );
      await (sync ? this.index.sync(() => this.route(req, res)) : this.route(req, res));
    } catch (error) {
      const status = error instanceof RepositoryError ? error.status : 500;
      // Every handler answers in one write at its end, so an error never comes after the headers.
      sendJson(res, status, renderException(status, (error as Error).message));
    }
  }

  private authenticate(req: IncomingMessage, url: URL): Actor | undefined {
    const { authorization } = req.headers;
    if (authorization?.startsWith('Bearer ')) {
      const user = this.oauth2.user(authorization);
      return user === undefined ? undefined : this.actor(user);
    }
    const token =
      (req.headers['x-authentication-token'] as string | undefined) ?? url.searchParams.get('token') ?? undefined;
    if (token !== undefined) {
      const entry = this.tokens.get(token);
      return entry ? this.actor(entry.user) : undefined;
    }
    const credentials = basicCredentials(req);
    if (credentials === undefined) return undefined;
    return this.users[credentials.name]?.password === credentials.password ? this.actor(credentials.name) : undefined;
  }

  /** 401 as the servlet container sends it: no JSON entity, a Basic challenge unless suppressed. */
  private unauthorized(req: IncomingMessage, res: ServerResponse): void {
    const quiet =
      req.headers['x-no-basic-header'] !== undefined ||
      req.headers['x-authentication-token'] !== undefined ||
      req.headers.cookie !== undefined;
    res.writeHead(401, {
      'Content-Type': 'text/html',
      ...(quiet ? {} : { 'WWW-Authenticate': 'Basic realm="Nuxeo Automation"' }),
    });
    res.end('<html><body><h1>401 Unauthorized</h1></body></html>');
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url as string, 'http://sandbox');
    if (!url.pathname.startsWith('/nuxeo/')) throw new RepositoryError(404, url.pathname);
    if (url.pathname === `/nuxeo${NUXEO_TOKEN_PATH}`) return this.oauth2.issue(req, res, url);
    const actor = this.authenticate(req, url);
    if (actor === undefined) return this.unauthorized(req, res);
    const path = url.pathname.slice('/nuxeo'.length);
    if (path.startsWith('/ui/') && this.options.webUiDir !== undefined)
      return sendWebUiFile(res, this.options.webUiDir, path.slice('/ui/'.length));
    if (path === '/json/cmis')
      return sendJson(res, 200, {
        default: { repositoryId: 'default', productName: 'connect2erp sandbox', productVersion: '2023.0' },
      });
    if (path === '/authentication/token') return this.token(res, url, actor);
    if (path.startsWith('/nxfile/default/')) {
      const [uid, ...xpath] = path.slice('/nxfile/default/'.length).split('/');
      return this.download(req, res, actor, this.byRef(uid), xpath.slice(0, -1).join('/'));
    }
    if (!path.startsWith('/api/v1/')) throw new RepositoryError(404, path);
    const api = path.slice('/api/v1/'.length).replace(/^repo\/default\//, '');
    const [head, ...rest] = api.split('/');
    switch (head) {
      case 'path':
      case 'id':
        return this.document(req, res, url, actor, head, rest.join('/'));
      case 'automation':
        return this.automation(req, res, actor, decodeURIComponent(rest.join('/')), undefined);
      case 'search':
      case 'query':
        return this.search(req, res, url, actor, api);
      case 'upload':
        return this.batches.handle(
          req,
          res,
          rest.filter((p) => p !== ''),
        );
      case 'user':
        if (req.method === 'POST' && rest.join('') === '') return this.createUser(res, actor, await this.jsonBody(req));
        return sendJson(res, 200, this.userEntity(decodeURIComponent(rest.join('/'))));
      case 'me':
        return sendJson(res, 200, this.userEntity(actor.name));
      // CapabilitiesObject and CapabilitiesJsonWriter (nuxeo-rest-api-server, 2021 and 2023): any signed-in user.
      case 'capabilities':
        return sendJson(res, 200, {
          'entity-type': 'capabilities',
          server: {
            distributionName: 'lts',
            distributionVersion: this.version,
            distributionServer: 'tomcat',
          },
          cluster: { enabled: false, nodeId: '1' },
          repository: { default: { queryBlobKeys: false } },
        });
      case 'config':
        return this.config(res, rest);
      default:
        throw new RepositoryError(404, path);
    }
  }

  /**
   * POST /api/v1/user (UserRootObject and AbstractUMRootObject, nuxeo-rest-api-server): an
   * administrator creates a user from a user entity (NuxeoPrincipalJsonReader: `id`, then
   * `properties`); 201 with the user, 409 when it exists, 400 without a name. Power users are not
   * modelled: anyone else gets 403.
   */
  private createUser(res: ServerResponse, actor: Actor, entity: Record<string, unknown>): void {
    if (!actor.isAdministrator) throw new RepositoryError(403, 'Cannot create artifact');
    const properties = (entity.properties ?? {}) as Record<string, unknown>;
    const name = typeof entity.id === 'string' ? entity.id : properties.username;
    if (typeof name !== 'string' || name === '') throw new RepositoryError(400, 'User MUST have a name');
    if (this.users[name] !== undefined) throw new RepositoryError(409, 'User already exists');
    const groups = Array.isArray(properties.groups) ? properties.groups.map(String) : [];
    this.users[name] = { password: String(properties.password ?? ''), groups };
    this.saveUsers();
    sendJson(res, 201, this.userEntity(name));
  }

  /** With a data folder, the users made over REST are kept with the documents: a restart knows them (Nuxeo keeps them in its user directory). */
  private saveUsers(): void {
    if (this.options.dataDir === undefined) return;
    writeFileSync(join(this.options.dataDir, USERS_FILE), `${JSON.stringify(this.users, null, 2)}\n`);
  }

  private savedUsers(): Record<string, User> {
    const file = this.options.dataDir === undefined ? undefined : join(this.options.dataDir, USERS_FILE);
    if (file === undefined || !existsSync(file)) return {};
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, User>;
  }

  private config(res: ServerResponse, path: string[]): void {
    const answer = configAnswer(this.store.registry, path.map(decodeURIComponent));
    if (answer === undefined) throw new RepositoryError(404, `config/${path.join('/')}`);
    if (answer.status === 204) return sendEmpty(res, 204);
    sendJson(res, 200, answer.body);
  }

  private token(res: ServerResponse, url: URL, actor: Actor): void {
    const params = ['applicationName', 'deviceId', 'permission'].map((p) => url.searchParams.get(p));
    if (params.some((p) => p === null || p === ''))
      throw new RepositoryError(400, 'Missing parameters: applicationName, deviceId and permission are required');
    const key = `${actor.name}|${params[0]}|${params[1]}`;
    const existing = [...this.tokens.entries()].find(([, v]) => v.key === key)?.[0];
    if (url.searchParams.get('revoke') === 'true') {
      if (existing) this.tokens.delete(existing);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return void res.end('');
    }
    const token = existing ?? randomUUID();
    this.tokens.set(token, { user: actor.name, key });
    res.writeHead(201, { 'Content-Type': 'text/plain' });
    res.end(token);
  }

  private userEntity(name: string): Record<string, unknown> {
    const user = this.users[name];
    if (user === undefined) throw new RepositoryError(404, `user does not exist: ${name}`);
    return {
      'entity-type': 'user',
      id: name,
      properties: { username: name, firstName: '', lastName: '', email: '', company: '', groups: user.groups },
      extendedGroups: user.groups.map((g) => ({ name: g, label: g, url: `group/${g}` })),
      isAdministrator: user.groups.includes('administrators'),
      isAnonymous: false,
    };
  }

  private byRef(ref: string): StoredDoc {
    const doc = ref.startsWith('/') ? this.store.getByPath(ref) : this.store.get(ref);
    if (doc === undefined) throw new RepositoryError(404, ref);
    return doc;
  }

  private selection(req: IncomingMessage, url: URL): SchemaSelection {
    const values = ['properties', 'x-nxproperties', 'x-nxdocumentproperties']
      .map((h) => req.headers[h] as string | undefined)
      .concat(url.searchParams.get('properties') ?? undefined)
      .filter((v): v is string => v !== undefined)
      .flatMap((v) => v.split(',').map((s) => s.trim()))
      .filter((v) => v !== '');
    if (values.length === 0) return undefined;
    return values.includes('*') ? '*' : values;
  }

  private render(req: IncomingMessage, url: URL, doc: StoredDoc): Record<string, unknown> {
    const entity = renderDocument(this.store, doc, this.selection(req, url), this.base);
    if (!this.enrichers(req).includes('permissions')) return entity;
    // BasePermissionsJsonEnricher (nuxeo-core-io): every registered permission the user is granted here.
    const actor = this.authenticate(req, url) as Actor;
    const permissions = [...KNOWN_PERMISSIONS].filter((permission) => this.store.can(actor, doc, permission));
    return { ...entity, contextParameters: { permissions } };
  }

  /** The document enrichers asked for: `enrichers-document`, `enrichers.document` or `X-NXenrichers.document` (RenderingContext). */
  private enrichers(req: IncomingMessage): string[] {
    return ['enrichers-document', 'enrichers.document', 'x-nxenrichers.document']
      .flatMap((name) => String(req.headers[name] ?? '').split(','))
      .map((name) => name.trim());
  }

  private async jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
    const body = await readBody(req);
    if (body.length === 0) return {};
    try {
      const parsed = JSON.parse(body.toString('utf8')) as unknown;
      return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    } catch {
      throw new RepositoryError(400, 'Invalid JSON body');
    }
  }

  /** Run a write that may attach uploaded blobs; used batches are dropped after the request. */
  private withBlobs<T>(req: IncomingMessage, write: (resolve: ReturnType<Batches['resolver']>) => T): T {
    const used = new Set<string>();
    const result = write(this.batches.resolver(this.store, used));
    if (req.headers['x-batch-no-drop'] !== 'true') this.batches.drop(used);
    return result;
  }

  private async document(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    actor: Actor,
    kind: 'path' | 'id',
    rest: string,
  ): Promise<void> {
    const at = rest.indexOf('@');
    const refPart = at >= 0 ? rest.slice(0, at).replace(/\/$/, '') : rest;
    const adapter = at >= 0 ? rest.slice(at) : '';
    const decoded = refPart.split('/').map(decodeURIComponent).join('/');
    const ref = kind === 'path' ? `/${decoded}`.replace(/\/+$/, '') || '/' : decoded;
    const doc = this.byRef(ref);
    if (adapter.startsWith('@op/')) return this.automation(req, res, actor, decodeURIComponent(adapter.slice(4)), doc);
    if (adapter === '@acl') {
      this.store.require(actor, doc, 'ReadSecurity');
      return sendJson(res, 200, renderAcls(this.store, doc));
    }
    if (adapter.startsWith('@blob/')) return this.download(req, res, actor, doc, decodeURIComponent(adapter.slice(6)));
    if (adapter === '@children') return this.children(req, res, url, actor, doc);
    if (adapter !== '') throw new RepositoryError(404, adapter);
    switch (req.method) {
      case 'GET':
        this.store.require(actor, doc, 'Read');
        return sendJson(res, 200, this.render(req, url, doc));
      case 'POST': {
        const body = await this.jsonBody(req);
        if (typeof body.type !== 'string' || typeof body.name !== 'string')
          throw new RepositoryError(400, 'type or name property is missing');
        const input = {
          type: body.type,
          name: body.name,
          properties: (body.properties as Record<string, unknown> | undefined) ?? {},
        };
        const created = this.withBlobs(req, (resolve) => this.store.create(actor, doc, input, resolve));
        return sendJson(res, 201, this.render(req, url, created));
      }
      case 'PUT': {
        const body = await this.jsonBody(req);
        const changeToken = typeof body.changeToken === 'string' ? body.changeToken : undefined;
        const properties = (body.properties as Record<string, unknown> | undefined) ?? {};
        const updated = this.withBlobs(req, (resolve) =>
          this.store.update(actor, doc, properties, resolve, { changeToken }),
        );
        return sendJson(res, 200, this.render(req, url, updated));
      }
      case 'DELETE':
        this.store.remove(actor, doc);
        return sendEmpty(res, 204);
      default:
        throw new RepositoryError(405, `Method ${String(req.method)} not allowed`);
    }
  }

  /**
   * `@children`: page provider CURRENT_DOC_CHILDREN, a core query (not in the default
   * `elasticsearch.override.pageproviders`), so it sees writes at once; trashed, hidden and
   * version documents left out, ordered by dc:title; 50 per page unless asked, at most 1000.
   */
  private children(req: IncomingMessage, res: ServerResponse, url: URL, actor: Actor, doc: StoredDoc): void {
    this.store.require(actor, doc, 'ReadChildren');
    const children = [...this.store.childIds(doc.uid)]
      .map((id) => this.store.get(id) as StoredDoc)
      .filter((c) => !c.trashed && this.store.can(actor, c, 'Browse'))
      .sort((a, b) => String(a.properties['dc:title']).localeCompare(String(b.properties['dc:title'])));
    const pageSize = Math.min(Number(url.searchParams.get('pageSize') ?? '50'), this.maxPageSize);
    const pageIndex = Number(url.searchParams.get('currentPageIndex') ?? '0');
    const page = children.slice(pageIndex * pageSize, (pageIndex + 1) * pageSize);
    return sendJson(
      res,
      200,
      renderPage(
        page.map((c) => this.render(req, url, c)),
        {
          total: children.length,
          more: (pageIndex + 1) * pageSize < children.length,
          pageSize,
          pageIndex,
          offset: pageIndex * pageSize,
          paginated: true,
        },
      ),
    );
  }

  private download(req: IncomingMessage, res: ServerResponse, actor: Actor, doc: StoredDoc, xpath: string): void {
    this.store.require(actor, doc, 'Read');
    const key = xpath === 'blobholder:0' || xpath === '' ? 'file:content' : xpath;
    const [prop, ...rest] = key.split('/');
    let value: unknown = doc.properties[prop];
    for (const part of rest)
      value = value === undefined || value === null ? undefined : (value as Record<string, unknown>)[part];
    const blob = value as StoredBlob | undefined;
    if (blob?.digest === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return void res.end('No blob found');
    }
    const length = Number(blob.length);
    const headers = {
      'Content-Type': blob['mime-type'],
      'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(blob.name)}`,
      ETag: `"${blob.digest}"`,
      'Accept-Ranges': 'bytes',
    };
    const range = singleRange(req.headers.range, length);
    if (range === undefined) {
      res.writeHead(200, { ...headers, 'Content-Length': length });
      return void this.store.blobStream(blob).pipe(res);
    }
    // DownloadHelper does not clamp the end to the blob: a range past it is answered with a
    // Content-Length the body cannot fill, and the connection ends short.
    res.writeHead(206, {
      ...headers,
      'Content-Length': range.to - range.from + 1,
      'Content-Range': `bytes ${range.from}-${range.to}/${length}`,
    });
    const content = this.store.blobStream(blob, range.from, Math.min(range.to, length - 1));
    content.on('end', () => {
      // Once what it had is on its way, the connection ends short of the announced length.
      if (range.to >= length) res.write('', () => res.destroy());
    });
    content.pipe(res, { end: range.to < length });
  }

  private async search(req: IncomingMessage, res: ServerResponse, url: URL, actor: Actor, api: string): Promise<void> {
    const known = ['search/execute', 'search/lang/NXQL/execute', 'query', 'query/NXQL'];
    if (!known.includes(api.replace(/\/$/, ''))) {
      if (/^search\/lang\/[^/]+\/execute$/.test(api)) throw new RepositoryError(400, 'invalid query language');
      throw new RepositoryError(404, api);
    }
    const params = url.searchParams;
    const requested = Number(params.get('pageSize') ?? '0');
    // Absent or 0 means "no pagination", still capped at the maximum page size. A larger page
    // size is clamped only in what is fetched (AbstractPageProvider.getMinMaxPageSize): the
    // answer, the offset of a page index and isNextPageAvailable keep the size asked for.
    const paginated = requested > 0;
    const { maxPageSize } = this;
    const limit = paginated ? Math.min(requested, maxPageSize) : maxPageSize;
    const pageIndex = Number(params.get('currentPageIndex') ?? '0');
    const offset = params.get('offset') !== null ? Number(params.get('offset')) : paginated ? pageIndex * requested : 0;
    const orders = (params.get('sortOrder') ?? '').split(',');
    const sort: SortKey[] | undefined = params
      .get('sortBy')
      ?.split(',')
      .map((property, i) => ({
        property: property.trim(),
        // Only "asc" sorts ascending; anything else, or nothing, sorts descending.
        descending: orders[i]?.trim().toLowerCase() !== 'asc',
      }));
    const result = this.index.search(actor, params.get('query') ?? 'SELECT * FROM Document', { offset, limit, sort });
    const entries = result.entries.map((doc) => this.render(req, url, doc));
    return sendJson(
      res,
      200,
      renderPage(entries, {
        total: result.total,
        more: result.more,
        pageSize: paginated ? requested : 0,
        maxPageSize,
        pageIndex,
        offset,
        paginated,
        maxResultWindow: MAX_RESULT_WINDOW,
      }),
    );
  }

  private async automation(
    req: IncomingMessage,
    res: ServerResponse,
    actor: Actor,
    operationId: string,
    adapted: StoredDoc | undefined,
  ): Promise<void> {
    const url = new URL(req.url as string, 'http://sandbox');
    if (operationId === 'login')
      return sendJson(res, 200, {
        'entity-type': 'login',
        username: actor.name,
        id: actor.name,
        isAdministrator: actor.isAdministrator,
      });
    const chain = this.chains.get(operationId.replace(/^Chain\./, ''));
    const operation = OPERATIONS[operationId];
    // AutomationResource.getExecutable: an unknown id is a 404, for a GET (its description) as for a call.
    if (operation === undefined && chain === undefined)
      throw new RepositoryError(404, `No operation with id ${operationId}`);
    // OperationResource.doGet: the operation's or chain's documentation (its id is what a client checks).
    if (req.method === 'GET') return sendJson(res, 200, { id: operationId });
    if (chain !== undefined && this.options.refusedChains?.includes(chain.id)) return sendEmpty(res, 404);
    const body = await this.jsonBody(req);
    const { input, list } = adapted ? { input: [adapted], list: false } : this.resolveInput(body.input);
    const params = (body.params as Record<string, unknown> | undefined) ?? {};
    // One transaction a request: an operation or a chain that fails leaves nothing behind.
    const result = this.withBlobs(req, (resolveBlob) =>
      this.store.transaction(() => {
        const context = {
          store: this.store,
          actor,
          users: this.principalNames(),
          resolveBlob,
          input,
          inputIsList: list,
        };
        return chain === undefined
          ? operation({ ...context, params })
          : runChain(chain, { ...context, chainParameters: params });
      }),
    );
    const voidOp = adapted === undefined && req.headers['x-nxvoidoperation'] === 'true';
    if (result === null || voidOp) return sendEmpty(res, 204);
    return sendJson(res, 200, this.renderResult(req, url, result));
  }

  private resolveInput(input: unknown): { input: StoredDoc[]; list: boolean } {
    if (typeof input !== 'string' || input === '') return { input: [], list: false };
    if (input.startsWith('docs:'))
      return {
        input: input
          .slice(5)
          .split(',')
          .map((ref) => this.byRef(ref.trim())),
        list: true,
      };
    return { input: [this.byRef(input.startsWith('doc:') ? input.slice(4) : input)], list: false };
  }

  private renderResult(
    req: IncomingMessage,
    url: URL,
    result: Exclude<OperationResult, null>,
  ): Record<string, unknown> {
    if (Array.isArray(result))
      return { 'entity-type': 'documents', entries: result.map((doc) => this.render(req, url, doc)) };
    if ('page' in result) {
      const { page, pageSize, pageIndex, paginated } = result;
      return renderPage(
        page.entries.map((doc) => this.render(req, url, doc)),
        {
          total: page.total,
          more: page.more,
          pageSize,
          pageIndex,
          offset: paginated ? pageIndex * pageSize : 0,
          paginated,
        },
      );
    }
    return this.render(req, url, result);
  }
}

/**
 * DownloadHelper.parseRange: one `bytes=a-b`, `bytes=a-` or `bytes=-n` range; anything else —
 * several ranges, a malformed one, a start past the end — is ignored and the whole blob sent
 * with 200 (there is no 416).
 */
function singleRange(header: string | undefined, length: number): { from: number; to: number } | undefined {
  const parts = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (parts === null || (parts[1] === '' && parts[2] === '')) return undefined;
  const [from, to] =
    parts[1] === ''
      ? [Math.max(0, length - Number(parts[2])), length - 1]
      : [Number(parts[1]), parts[2] === '' ? length - 1 : Number(parts[2])];
  return from > to || from >= length ? undefined : { from, to };
}
