import got, { HTTPError, type RequestError, type Got, type OptionsOfJSONResponseBody } from 'got';
import pLimit, { type LimitFunction } from 'p-limit';
import type { StorageConfig } from '../config/storage-schema.js';
import {
  AuthenticationError, BadRequestError, ConflictError, DocumentError, ForbiddenError, NotFoundError,
  PermanentError, TransientError, type Connect2ErpError,
} from '../errors.js';
import { basicAuthorization, connectionOptions } from '../http-options.js';
import type { Logger } from '../log.js';
import type { AclEntity, RepositoryDocument, SearchPage } from './document.js';

const TRANSIENT_STATUS = [429, 502, 503, 504];

/** A PUT was accepted but some properties did not stick (their facet is missing on the server). */
export class PropertiesDroppedError extends DocumentError {
  constructor(readonly document: RepositoryDocument, readonly dropped: string[]) {
    super(`the repository accepted but did not store ${dropped.join(', ')} on ${document.path}: is the facet declared on the server?`, { target: document.path });
  }
}

/** Classify where the failure is raised, so retry logic never parses messages. */
function typedError(error: unknown, what: string): Connect2ErpError {
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    const body = error.response.body as { message?: unknown } | string | undefined;
    const detail = typeof body === 'object' && body !== null && typeof body.message === 'string' ? `: ${body.message}` : '';
    const message = `${what} failed with HTTP ${status}${detail}`;
    const details = { status, target: what };
    if (status === 401) return new AuthenticationError(`${message} (check the credentials in storage.yaml)`, details);
    if (status === 403) return new ForbiddenError(message, details);
    if (status === 404) return new NotFoundError(message, details);
    if (status === 409) return new ConflictError(message, details);
    if (TRANSIENT_STATUS.includes(status)) return new TransientError(message, details);
    if (status >= 400 && status < 500) return new BadRequestError(message, details);
    return new PermanentError(message, details);
  }
  // Anything else got raises is a RequestError: no connection, reset, time-out.
  return new TransientError(`${what} failed (${(error as RequestError).code}): ${(error as Error).message}`, { target: what });
}

function sameValue(sent: unknown, stored: unknown): boolean {
  if (sent === null || sent === undefined) return stored === null || stored === undefined || (Array.isArray(stored) && stored.length === 0);
  if (typeof sent === 'string' && typeof stored === 'string' && sent !== stored) {
    const a = Date.parse(sent);
    return !Number.isNaN(a) && /^\d{4}-\d{2}-\d{2}/.test(sent) && a === Date.parse(stored);
  }
  return JSON.stringify(sent) === JSON.stringify(stored);
}

/**
 * REST client for a Nuxeo-compatible repository: every request is bounded by one
 * concurrency limit, times out, and retries only transient failures.
 */
export class RepositoryClient {
  private readonly http: Got;
  private readonly limit: LimitFunction;

  constructor(private readonly config: StorageConfig, private readonly log: Logger) {
    const auth = config.auth.type === 'basic'
      ? { Authorization: basicAuthorization(config.auth) }
      : { 'X-Authentication-Token': config.auth.token };
    this.limit = pLimit(config.maxConcurrentRequests);
    this.http = got.extend({
      prefixUrl: `${config.url.replace(/\/$/, '')}${config.apiPath}`,
      headers: { ...auth, Accept: 'application/json' },
      ...connectionOptions(config),
      retry: {
        limit: config.retries,
        methods: ['GET', 'PUT', 'POST', 'DELETE'],
        statusCodes: TRANSIENT_STATUS,
        calculateDelay: ({ attemptCount, computedValue, error }) => {
          if (computedValue === 0) return 0;
          if (error.response?.headers['retry-after'] !== undefined) return computedValue;
          return config.retryDelayMs * 2 ** (attemptCount - 1);
        },
      },
      hooks: {
        beforeRetry: [
          (error, retryCount) => {
            this.log.warn('repository request retried', { url: error.options.url?.toString(), retryCount, code: error.code, status: error.response?.statusCode });
          },
        ],
      },
    });
  }

  private async json<T>(what: string, path: string, options: OptionsOfJSONResponseBody): Promise<T> {
    return this.limit(async () => {
      try {
        return (await this.http(path, { ...options, responseType: 'json' })).body as T;
      } catch (error) {
        throw typedError(error, what);
      }
    });
  }

  /** NXQL search; `pageSize` is always sent, because without it the server silently caps at 1000. */
  async search(query: string, page: { pageSize?: number } = {}): Promise<SearchPage> {
    const searchParams = { query, pageSize: page.pageSize ?? this.config.pageSize };
    return this.json('search', 'search/execute', { searchParams, headers: { properties: '*' } });
  }

  async getById(uid: string): Promise<RepositoryDocument> {
    return this.json(`read ${uid}`, `id/${encodeURIComponent(uid)}`, { headers: { properties: '*' } });
  }

  async getByPath(path: string): Promise<RepositoryDocument> {
    return this.json(`read ${path}`, `path${encodePath(path)}`, { headers: { properties: '*' } });
  }

  async getAcl(uid: string): Promise<AclEntity> {
    return this.json(`read the ACL of ${uid}`, `id/${encodeURIComponent(uid)}/@acl`, {});
  }

  async downloadBlob(uid: string, xpath = 'file:content'): Promise<Buffer> {
    return this.limit(async () => {
      try {
        return (await this.http(`id/${encodeURIComponent(uid)}/@blob/${xpath}`, { responseType: 'buffer' })).body;
      } catch (error) {
        throw typedError(error, `download ${xpath} of ${uid}`);
      }
    });
  }

  /** One Automation call for many documents (`docs:` input); the server answers nothing (void). */
  async addFacet(uids: string[], facet: string): Promise<void> {
    await this.limit(async () => {
      try {
        await this.http.post('automation/Document.AddFacet', {
          json: { input: `docs:${uids.join(',')}`, params: { facet } },
          headers: { 'X-NXVoidOperation': 'true' },
        });
      } catch (error) {
        throw typedError(error, `add facet ${facet}`);
      }
    });
  }

  /**
   * Partial update with optimistic locking. The real server drops, without error, any
   * property whose facet the document lacks, so the answer is compared with what was sent.
   */
  async update(doc: { uid: string; changeToken?: string | null }, properties: Record<string, unknown>): Promise<RepositoryDocument> {
    const json: Record<string, unknown> = { 'entity-type': 'document', uid: doc.uid, properties };
    if (doc.changeToken) json.changeToken = doc.changeToken;
    const updated = await this.json<RepositoryDocument>(`update ${doc.uid}`, `id/${encodeURIComponent(doc.uid)}`, { method: 'PUT', json, headers: { properties: '*' } });
    const dropped = Object.keys(properties).filter((key) => !sameValue(properties[key], updated.properties[key]));
    if (dropped.length > 0) throw new PropertiesDroppedError(updated, dropped);
    return updated;
  }

  /** Create a child document. Never retried: a lost answer must not create a second document. */
  async create(parentUid: string, input: { type: string; name: string; properties: Record<string, unknown> }): Promise<RepositoryDocument> {
    return this.json(`create ${input.name}`, `id/${encodeURIComponent(parentUid)}`, {
      method: 'POST',
      json: { 'entity-type': 'document', ...input },
      headers: { properties: '*' },
      retry: { limit: 0 },
    });
  }

  async move(uid: string, targetUid: string): Promise<RepositoryDocument> {
    return this.json(`move ${uid}`, `id/${encodeURIComponent(uid)}/@op/Document.Move`, {
      method: 'POST',
      json: { params: { target: targetUid } },
      headers: { properties: '*' },
    });
  }
}

/** Each path segment is URL-encoded (spaces and all), the slashes kept. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
