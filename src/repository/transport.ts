import { ClientCredentials } from '../oauth/client-credentials.js';
import { nuxeoTokenEndpoint } from './oauth-endpoint.js';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Dispatcher } from 'undici';
import type { StorageConfig } from '../config/storage-schema.js';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  NotServedError,
  PermanentError,
  TransientError,
  UntrustedServerError,
  Connect2ErpError,
} from '../../common/errors.js';
import {
  basicAuthorization,
  certificateRefused,
  dispatcherFor,
  failureCode,
  failureText,
  requestTarget,
} from '../http-options.js';
import type { Logger } from '../log.js';
import { isWebPage, WEB_PAGE } from '../web-page.js';
import { ANSWER_MAX_TEXT, readBounded } from '../bounded-body.js';
import { retryDelay, TRANSIENT_STATUS, type RetryPolicy } from './retry-policy.js';

/** An answer too large to hold: the repository's data, for a person to look at; not tried again. */
export class AnswerTooLargeError extends PermanentError {
  override readonly scope = 'run';
}

/** Redirects a download follows (a blob served from elsewhere), at most MAX_REDIRECTS of them. */
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

interface RepositoryRequest {
  /** What the request does, for messages and logs: `update <uid>`, `search`. */
  what: string;
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Below the API root (`id/<uid>`, `search/execute`), already encoded. */
  path: string;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
  json?: unknown;
  /** A body streamed as it comes (an upload); such a request is sent once. */
  stream?: Readable;
  /** Never sent twice: a lost answer to a create must not create a second document. */
  once?: boolean;
  /**
   * A whole page of documents waits on it (a search, a facet added to a page): it goes ahead
   * of the single-document writes waiting for a place, so the next page is ready before
   * the current one runs out of work.
   */
  pageWide?: boolean;
}

type Read<T> = (response: Dispatcher.ResponseData) => Promise<T>;

/** An answer whose body is read by the caller, as it comes. */
export interface OpenAnswer {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
}

/** Raised for an answer that came back with an error status; typed by it below. */
class StatusError extends Error {
  constructor(
    readonly status: number,
    readonly serverMessage: string | undefined,
    readonly retryAfter: string | undefined,
  ) {
    super(`HTTP ${status}`);
  }
}

/**
 * HTTP to the repository: one limit on requests in flight, time-outs, TLS as configured,
 * transient failures retried as retry-policy.ts has it, every failure
 * typed where it is raised. undici rather than got: this is the job's hot path, one request
 * per document a few milliseconds apart, and got costs several times its CPU per request
 * (BENCHMARKS.md, "What was changed in the job").
 */
export class RepositoryTransport {
  private readonly dispatcher: Dispatcher;
  /** Requests in flight at most `maxConcurrentRequests`; page-wide ones first. */
  private readonly queue: PQueue;
  private readonly origin: string;
  private readonly root: string;
  private readonly headers: Record<string, string>;
  /** OAuth 2.0 client credentials (Nuxeo's client credentials flow), when `auth` is `oauth2`. */
  private readonly credentials?: ClientCredentials;
  /** The token each request went with, so that a 401 drops that one and not a newer one. */
  private readonly sentTokens = new WeakMap<RepositoryRequest, string>();
  private readonly retryPolicy: RetryPolicy;

  constructor(
    config: StorageConfig,
    private readonly log: Logger,
  ) {
    const url = new URL(`${config.url.replace(/\/$/, '')}${config.apiPath}`);
    this.origin = url.origin;
    this.root = url.pathname;
    const { auth } = config;
    const signIn: Record<string, string> =
      auth.type === 'basic'
        ? { authorization: basicAuthorization(auth) }
        : auth.type === 'token'
          ? { 'x-authentication-token': auth.token }
          : {};
    this.headers = { ...signIn, accept: 'application/json' };
    this.retryPolicy = {
      retries: config.retries,
      delayMs: config.retryDelayMs,
      maxRetryAfterMs: config.timeouts.requestMs,
    };
    this.queue = new PQueue({ concurrency: config.maxConcurrentRequests });
    // Not limited to `maxConcurrentRequests`: the queue limits the requests that start, and a body
    // streamed to its reader (the content server's downloads) keeps its connection after it has
    // given its place back. A pool of that size would then leave new requests no connection.
    // A large download is not cut off while it keeps coming: the time-out is an idle one.
    this.dispatcher = dispatcherFor(config.url, config);
    if (auth.type === 'oauth2') {
      const tokenUrl = auth.tokenUrl ?? `${config.url.replace(/\/$/, '')}/oauth2/token`;
      this.credentials = new ClientCredentials({ ...auth, tokenUrl }, nuxeoTokenEndpoint(tokenUrl, this.dispatcher));
    }
  }

  /** The bearer token of the client credentials, when the connection signs in with them. */
  private async bearer(request: RepositoryRequest): Promise<Record<string, string>> {
    if (this.credentials === undefined) return {};
    const token = await this.credentials.token();
    this.sentTokens.set(request, token);
    return { authorization: `Bearer ${token}` };
  }

  async json<T>(request: RepositoryRequest): Promise<T> {
    return (await this.send(request, async ({ body, headers }) => {
      const text = (await bounded(body, request)).toString('utf8');
      if (!isWebPage(headers['content-type'], text)) return JSON.parse(text);
      throw new AuthenticationError(`${request.what}: ${WEB_PAGE} (url and auth in storage.yaml)`, {
        target: request.what,
      });
    })) as T;
  }

  /** A small file whole (a mapping file, a declaration), at most ANSWER_MAX_BYTES; larger ones are streamed with `open`. */
  async download(request: RepositoryRequest): Promise<Buffer> {
    return this.send(request, async ({ body }) => bounded(body, request), true);
  }

  /**
   * The answer as soon as it begins, its body left to the caller to stream (redirects followed,
   * failures before the answer retried). Its place among the requests in flight is given back
   * then: a slow reader of a large blob holds a connection, not the limit.
   */
  async open(request: RepositoryRequest): Promise<OpenAnswer> {
    return this.send(request, async (response) => response, true);
  }

  /** For answers without content (void operations). */
  async discard(request: RepositoryRequest): Promise<void> {
    await this.send(request, async ({ body }) => body.dump());
  }

  /**
   * `follow`: redirects are followed (downloads only; the API answers in place). A request tried
   * again is logged once, when it ends, with how many tries it took: a repository down for a while
   * is one line per request, not one per try.
   */
  private async send<T>(request: RepositoryRequest, read: Read<T>, follow = false): Promise<T> {
    let last: { code?: string; status?: number } = {};
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.queue.add(() => this.attempt(request, read, follow), {
          priority: request.pageWide ? 1 : 0,
        });
        if (attempt > 1) this.retried(request, attempt, last, 'answered');
        return result;
      } catch (error) {
        // A token the server no longer takes (expired early, revoked): a fresh one, and the request once more.
        if (this.renews(error, request, renewed)) {
          renewed = true;
          attempt--; // not a try of the request's: a new token
          continue;
        }
        last = error instanceof StatusError ? { status: error.status } : { code: failureCode(error as Error) };
        const delayMs = this.retryDelay(request, error, attempt);
        if (delayMs === undefined) {
          if (attempt > 1) this.retried(request, attempt, last, 'gave up');
          throw typedError(error, request.what);
        }
        this.log.debug('repository request failed, trying again', { url: this.pathOf(request), attempt, ...last });
        await sleep(delayMs);
      }
    }
  }

  /** Whether a 401 is answered by fetching a new token and sending again: once, with a body that can be sent again. */
  private renews(error: unknown, request: RepositoryRequest, renewed: boolean): boolean {
    if (this.credentials === undefined || renewed || request.stream !== undefined) return false;
    if (!(error instanceof StatusError) || error.status !== 401) return false;
    this.credentials.refused(this.sentTokens.get(request) as string);
    return true;
  }

  private retried(request: RepositoryRequest, tries: number, last: object, outcome: string): void {
    this.log.warn('repository request retried', { url: this.pathOf(request), tries, outcome, ...last });
  }

  private pathOf(request: RepositoryRequest): string {
    return `${this.root}/${request.path}`;
  }

  private async attempt<T>(request: RepositoryRequest, read: Read<T>, follow: boolean): Promise<T> {
    const query =
      request.query === undefined
        ? ''
        : `?${new URLSearchParams(Object.entries(request.query).map(([k, v]): [string, string] => [k, String(v)]))}`;
    const headers: Record<string, string> = { ...this.headers, ...(await this.bearer(request)), ...request.headers };
    let body: string | Readable | undefined = request.stream;
    if (request.json !== undefined) {
      body = JSON.stringify(request.json);
      headers['content-type'] = 'application/json';
    }
    return this.exchange(
      { origin: this.origin, path: `${this.pathOf(request)}${query}` },
      request,
      { headers, body },
      read,
      follow,
    );
  }

  /** One request and its answer; with `follow`, the redirects on the way too, `hops` of them so far. */
  private async exchange<T>(
    target: { origin: string; path: string },
    request: RepositoryRequest,
    sent: { headers: Record<string, string>; body?: string | Readable },
    read: Read<T>,
    follow: boolean,
    hops = 0,
  ): Promise<T> {
    const response = await this.dispatcher.request({ ...target, method: request.method, ...sent });
    const location =
      follow && REDIRECT_STATUS.has(response.statusCode) && hops < MAX_REDIRECTS
        ? response.headers.location
        : undefined;
    if (typeof location === 'string') {
      await response.body.dump();
      const next = new URL(location, `${target.origin}${target.path}`);
      // Credentials stay with the repository: a blob store on another host (direct download)
      // gets none, and none come back on later hops.
      const headers = next.origin === this.origin ? sent.headers : {};
      return this.exchange(requestTarget(next), request, { ...sent, headers }, read, follow, hops + 1);
    }
    if (response.statusCode < 300) return read(response);
    const text = await response.body.text();
    // Only set-cookie comes as a list.
    throw new StatusError(
      response.statusCode,
      serverMessage(text),
      response.headers['retry-after'] as string | undefined,
    );
  }

  /** How long to wait before the next try, or undefined when there is none: the request and the error may rule one out. */
  private retryDelay(request: RepositoryRequest, error: unknown, attempt: number): number | undefined {
    if (request.once || request.stream !== undefined || certificateRefused(error)) return undefined;
    if (error instanceof Connect2ErpError && !error.transient) return undefined;
    const answer = error instanceof StatusError ? error : undefined;
    return retryDelay(this.retryPolicy, attempt, answer, Math.random, Date.now());
  }
}

/** An answer read whole, refused once it passes ANSWER_MAX_BYTES: memory never follows what the server sends. */
async function bounded(body: Dispatcher.ResponseData['body'], request: RepositoryRequest): Promise<Buffer> {
  const read = await readBounded(body);
  if (read !== undefined) return read;
  throw new AnswerTooLargeError(
    `${request.what}: the repository's answer is larger than ${ANSWER_MAX_TEXT}; a document holding a very large value? (a smaller pageSize in storage.yaml narrows a search down)`,
    { target: request.what },
  );
}

/** The `message` of the server's JSON error entity, when it sent one. */
function serverMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

/** Classify where the failure is raised, so retry logic never parses messages. */
function typedError(error: unknown, what: string): Connect2ErpError {
  if (error instanceof Connect2ErpError) return error;
  if (error instanceof StatusError) {
    const { status } = error;
    const message = `${what} failed with HTTP ${status}${error.serverMessage === undefined ? '' : `: ${error.serverMessage}`}`;
    const details = { status, target: what };
    if (status === 401) return new AuthenticationError(`${message} (check the credentials in storage.yaml)`, details);
    if (status === 403) return new ForbiddenError(message, details);
    if (status === 404)
      return error.serverMessage === undefined
        ? new NotServedError(message, details)
        : new NotFoundError(message, details);
    if (status === 409) return new ConflictError(message, details);
    if (TRANSIENT_STATUS.has(status)) return new TransientError(message, details);
    if (status < 500) return new BadRequestError(message, details);
    return new PermanentError(message, details);
  }
  if (certificateRefused(error)) {
    return new UntrustedServerError(
      `${what} failed: the repository's TLS certificate is not trusted (${failureCode(error as Error)}: ${failureText(error as Error)}); check tls.caFile in storage.yaml`,
      { target: what },
    );
  }
  // Anything else is the connection's: refused, reset, closed, a time-out.
  return new TransientError(`${what} failed (${failureCode(error as Error)}): ${failureText(error as Error)}`, {
    target: what,
  });
}
