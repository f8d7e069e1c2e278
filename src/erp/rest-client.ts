import type { Readable } from 'node:stream';
import got, { type Got, type Response } from 'got';
import { CookieJar } from 'tough-cookie';
import type { ErpSystemConfig } from '../config/erp-schema.js';
import { BusinessRefusal, PermanentError, SystemRefusalError, SystemUnavailableError } from '../../common/errors.js';
import { heldToAnswerLimit } from '../bounded-body.js';
import { NEVER, StopAwareQueue } from '../stop.js';
import { basicAuthorization, certificateRefused } from '../http-options.js';
import { connectionOptions } from './rest-connection.js';
import type { Logger } from '../log.js';
import { answerTooLarge, networkFailure, statusFailure } from './failure.js';
import { isWebPage, WEB_PAGE } from '../web-page.js';
import type { ErpConnection, PlannedCall } from '../ports/erp-port.js';
import { ClientCredentials } from '../oauth/client-credentials.js';
import { sapTokenEndpoint } from './oauth-endpoint.js';
import { withoutSignature } from '../document-link.js';
import { CertificateCheck } from './certificate-check.js';

export interface RestRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Service root (where the CSRF token is fetched) and the path below it. */
  service: string;
  path: string;
  headers: Record<string, string>;
  /** `content` is opened for each time the request is sent: a stream is read once. */
  body?: { json: unknown } | { content: () => Promise<UploadContent> };
  /** The service takes SAP Gateway's CSRF handshake on writes. */
  csrf: boolean;
}

/** A file to upload as it streams, with its length (Content-Length) when the repository gave it. */
export interface UploadContent {
  stream: Readable;
  length?: string;
}

/** What goes with a request besides its headers: a JSON body or a streamed file, and the file's length. */
interface Payload {
  json?: unknown;
  body?: Readable;
  headers: Record<string, string>;
}

/** SAP answered with an error of its own (OData `error.message`): the business said no. */
export class RestFault extends BusinessRefusal {
  constructor(
    readonly code: string,
    message: string,
    details: { status: number; target: string },
  ) {
    super(message, details);
  }
}

/** The OData error body SAP Gateway sends: `{"error":{"code":…,"message":{"value":…}}}`. */
function odataError(body: string): { code: string; message: string } | undefined {
  try {
    const error = (JSON.parse(body) as { error?: { code?: string; message?: { value?: string } | string } }).error;
    if (error === undefined) return undefined;
    const message = typeof error.message === 'string' ? error.message : (error.message?.value ?? '');
    return { code: String(error.code ?? ''), message };
  } catch {
    return undefined;
  }
}

/** SAP Gateway's answer to a missing or stale token: 403 with `X-CSRF-Token: Required`. */
const csrfRequired = (response: Response<string>): boolean =>
  response.statusCode === 403 && String(response.headers['x-csrf-token']).toLowerCase() === 'required';

/** A header value must be Latin-1; anything else (a file name in Slug, say) is percent-encoded. */
const headerValue = (value: string): string => (/^[\x20-\x7e]*$/.test(value) ? value : encodeURIComponent(value));

/** A request as messages, logs and plans show it: a document link's signature masked (document-link.ts). */
const shown = (request: RestRequest): string => withoutSignature(`${request.method} ${request.service}${request.path}`);

/**
 * HTTP/OData calls to one SAP system, with SAP Gateway's CSRF handshake: a token (and the
 * session cookies that go with it) is fetched once with `X-CSRF-Token: Fetch`, sent on every
 * write, and fetched again when SAP answers 403 `X-CSRF-Token: Required`.
 */
export class RestClient implements ErpConnection<RestRequest> {
  private readonly http: Got;
  private readonly limit: StopAwareQueue;
  private readonly tokens = new Map<string, Promise<string>>();
  private readonly client: Record<string, string>;
  /** Basic auth, or OAuth 2.0 client credentials (oauth/client-credentials.ts). */
  private readonly basic: string | undefined;
  private readonly credentials: ClientCredentials | undefined;
  /** Set when the system signs in with a client certificate: checked before the first call. */
  private readonly certificate?: CertificateCheck;

  constructor(
    readonly system: ErpSystemConfig & { rest: NonNullable<ErpSystemConfig['rest']> },
    private readonly log: Logger,
    stop = NEVER,
  ) {
    this.limit = new StopAwareQueue(system.maxConcurrentCalls, stop);
    this.client = { 'sap-client': system.client, ...(system.language ? { 'sap-language': system.language } : {}) };
    const { auth } = system.rest;
    this.http = got.extend({
      prefixUrl: system.rest.url,
      headers: { Accept: 'application/json' },
      cookieJar: new CookieJar(),
      ...connectionOptions(system.rest.url, system),
      retry: { limit: 0 },
      throwHttpErrors: false,
    });
    if (!('type' in auth)) this.basic = basicAuthorization(auth);
    else if (auth.type === 'oauth2')
      this.credentials = new ClientCredentials(
        auth,
        sapTokenEndpoint(
          auth.tokenUrl,
          this.http,
          system.name,
          auth.clientSecret === undefined ? system.tls.certFile : undefined,
        ),
      );
    else {
      const head = async (): Promise<number> => (await this.http.head('', { searchParams: this.client })).statusCode;
      this.certificate = new CertificateCheck(head, `the Rest connection of ${system.name}`, system);
    }
  }

  /** The Authorization header: the user's, a bearer token of the client credentials, or none (a client certificate). */
  private async authorization(): Promise<string | undefined> {
    if (this.certificate !== undefined) {
      await this.certificate.passed();
      return undefined;
    }
    return this.basic ?? `Bearer ${await (this.credentials as ClientCredentials).token()}`;
  }

  describe(request: RestRequest): PlannedCall {
    const params =
      request.body !== undefined && 'json' in request.body
        ? (request.body.json as Record<string, unknown>)
        : request.headers;
    return { system: this.system.name, call: shown(request), params };
  }

  async send(request: RestRequest): Promise<Record<string, unknown>> {
    const call = shown(request);
    const where = `${call} on ${this.system.name}`;
    return this.limit.run(where, async () => {
      this.log.debug('rest call', {
        system: this.system.name,
        call,
      });
      let response = await this.exchange(request, where);
      if (this.tokenRefused(response)) response = await this.exchange(request, where);
      if (csrfRequired(response)) {
        // The session or its token expired: one fresh handshake, then the write once more.
        this.tokens.delete(request.service);
        response = await this.exchange(request, where);
      }
      return this.answer(response, where);
    });
  }

  private async payload(request: RestRequest): Promise<Payload> {
    if (request.body === undefined) return { headers: {} };
    if ('json' in request.body) return { json: request.body.json, headers: {} };
    const { stream, length } = await request.body.content();
    return { body: stream, headers: length === undefined ? {} : { 'Content-Length': length } };
  }

  private async exchange(request: RestRequest, where: string): Promise<Response<string>> {
    const writes = request.method !== 'GET';
    const csrf = writes && request.csrf ? { 'X-CSRF-Token': await this.token(request.service, where) } : {};
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, headerValue(v)]));
    // Signed in before the file is opened: a token endpoint that fails leaves no download open.
    const authorization = await this.authorization();
    const { headers: sized, ...body } = await this.payload(request);
    // The path's own query goes as the template encoded it (%20, not a form's +), the client's after it.
    const [path, query] = `${request.service}${request.path}`.split(/\?(.*)/s);
    const own = query ? `${query}&` : '';
    const sent = this.http(`${path.replace(/^\//, '')}?${own}${new URLSearchParams(this.client)}`, {
      method: request.method,
      headers: { ...headers, ...sized, ...csrf, Authorization: authorization },
      ...body,
    });
    // An answer read whole is held to ANSWER_MAX_BYTES, as the SOAP-RFC client's.
    const answered = heldToAnswerLimit(sent, (error, tooLarge) =>
      tooLarge ? answerTooLarge(where) : networkFailure(error, where, this.system.name),
    );
    // An answer that came before the file was read whole (a refused token): the download is let go.
    return answered.finally(() => body.body?.destroy());
  }

  /** A CSRF token for the service, fetched as a write fetches it (HEAD, `X-CSRF-Token: Fetch`): doctor's read-only check. */
  csrfToken(service: string): Promise<string> {
    return this.token(service, `${service} on ${this.system.name}`);
  }

  /** One handshake per service at a time; concurrent writes wait for the same token. */
  private token(service: string, where: string): Promise<string> {
    const cached = this.tokens.get(service);
    if (cached) return cached;
    const fetched = this.fetchToken(service, where);
    this.tokens.set(service, fetched);
    fetched.catch(() => this.tokens.delete(service));
    return fetched;
  }

  private async fetchToken(service: string, where: string): Promise<string> {
    let response: Response<string>;
    try {
      // The trailing slash: some on-premise systems only answer the service root with it.
      const fetch = async (): Promise<Response<string>> =>
        this.http(`${service.replace(/^\//, '')}/`, {
          method: 'HEAD',
          searchParams: this.client,
          headers: { 'X-CSRF-Token': 'Fetch', Authorization: await this.authorization() },
        });
      response = await fetch();
      if (this.tokenRefused(response)) response = await fetch();
    } catch (error) {
      // The sign-in itself refused (a token endpoint, a client certificate): the system's refusal as it is.
      if (error instanceof SystemRefusalError) throw error;
      if (certificateRefused(error)) throw networkFailure(error, `CSRF token for ${where}`, this.system.name);
      // Nothing was written yet: whatever happened to the handshake, the system did not take the write.
      throw new SystemUnavailableError(`CSRF token for ${where} failed: ${(error as Error).message}`, {
        target: where,
      });
    }
    const token = response.headers['x-csrf-token'];
    if (response.statusCode < 400 && typeof token === 'string' && token !== '' && token.toLowerCase() !== 'required')
      return token;
    this.answer(response, `CSRF token for ${where}`);
    throw new PermanentError(`CSRF token for ${where}: SAP sent no X-CSRF-Token (HTTP ${response.statusCode})`, {
      status: response.statusCode,
      target: where,
    });
  }

  /** SAP refused a bearer token (expired early, revoked): it is dropped, and the caller sends once more with a fresh one. */
  private tokenRefused(response: Response<string>): boolean {
    if (response.statusCode !== 401 || this.credentials === undefined) return false;
    this.credentials.refused(String(response.request.options.headers.authorization).slice('Bearer '.length));
    return true;
  }

  private answer(response: Response<string>, where: string): Record<string, unknown> {
    const status = response.statusCode;
    const details = { status, target: where };
    if (status === 401)
      throw new SystemRefusalError(
        `${where}: SAP refused the credentials (HTTP 401${this.credentials ? ', a fresh OAuth token too' : ''}); check rest.auth in erpHttp.yaml`,
        details,
      );
    if (status < 300 && isWebPage(response.headers['content-type'], response.body))
      throw new SystemRefusalError(
        `${where}: ${WEB_PAGE} (rest.url and rest.auth of system ${this.system.name} in erpHttp.yaml)`,
        details,
      );
    if (status < 300) return this.parse(response.body, where);
    const error = odataError(response.body);
    if (csrfRequired(response)) {
      throw new PermanentError(`${where}: SAP refused the CSRF token twice (HTTP 403)`, details);
    }
    // A 5xx that carries SAP's own error message is a business answer; a bare one is an outage.
    if (error !== undefined && error.message !== '' && status !== 503)
      throw new RestFault(
        error.code,
        `${where}: ${withoutSignature([error.code, error.message].filter((part) => part !== '').join(' '))}`,
        details,
      );
    throw statusFailure(status, where);
  }

  /** JSON answers; OData V2 wraps its payload in `d`. An empty body (HEAD, 204) is no values. */
  private parse(body: string, where: string): Record<string, unknown> {
    if (body.trim() === '') return {};
    try {
      const json = JSON.parse(body) as Record<string, unknown>;
      return (json.d as Record<string, unknown> | undefined) ?? json;
    } catch {
      throw new PermanentError(`${where}: the answer is not JSON`, { target: where });
    }
  }
}
