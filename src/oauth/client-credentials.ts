import { Connect2ErpError } from '../../common/errors.js';
import { basicAuthorization } from '../http-options.js';
import { registerSecret } from '../log.js';

/** How long before its end a token is replaced: a minute, or half its life when it is shorter. */
const MARGIN_MS = 60_000;

/** A client of the client-credentials grant, as a configuration file gives it. */
interface ClientCredentialsConfig {
  tokenUrl: string;
  clientId: string;
  /** Absent where the client authenticates with its TLS certificate. */
  clientSecret?: string;
  scope?: string;
}

/** One connection's token endpoint: how to post to it, and how its failures are told and typed. */
export interface TokenEndpoint {
  /** The form posted, with these headers: the answer's status and body; throws when none came. */
  post(form: Record<string, string>, headers: Record<string, string>): Promise<{ status: number; body: string }>;
  /**
   * How the client authenticates: Basic (RFC 6749 §2.3.1; SAP), its id and secret in the form
   * (Nuxeo's documented way), or its TLS client certificate with its id in the form (RFC 8705 §2).
   */
  clientAuthentication: 'basic' | 'form' | 'certificate';
  /** For messages: "the OAuth token endpoint of S4H (https://…)". */
  where: string;
  /** What to check when the client is refused: "rest.auth (…) in erpHttp.yaml". */
  check: string;
  /** The connection's errors: the credentials refused (the system's or the run's scope)… */
  refused(message: string, details: { status: number; target: string }): Connect2ErpError;
  /** …the endpoint busy or down for now (429, 5xx)… */
  unavailable(message: string, details: { status?: number; target: string }): Connect2ErpError;
  /** …and no answer (a connection that failed, a certificate not trusted), typed as the connection types it. */
  noAnswer(error: unknown): Connect2ErpError;
}

/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) for one connection: a token fetched from the token
 * endpoint with the client's id and secret, kept until shortly before it expires (`expires_in`,
 * §5.1), fetched once for every caller waiting, and dropped when the server refuses it. The secret
 * and the tokens are masked in logs like passwords.
 */
export class ClientCredentials {
  private current: { token: string; refreshAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly config: ClientCredentialsConfig,
    private readonly endpoint: TokenEndpoint,
    private readonly now: () => number = Date.now,
  ) {
    if (config.clientSecret !== undefined) registerSecret(config.clientSecret);
  }

  /** A token to send, fetched when there is none or the one held is about to expire. */
  token(): Promise<string> {
    if (this.current !== undefined && this.now() < this.current.refreshAt) return Promise.resolve(this.current.token);
    this.pending ??= this.fetch().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** The server refused `token` (expired or revoked early): the next caller fetches a new one, unless one came meanwhile. */
  refused(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async fetch(): Promise<string> {
    const { config, endpoint } = this;
    const { where } = endpoint;
    const form: Record<string, string> = { grant_type: 'client_credentials' };
    if (endpoint.clientAuthentication !== 'basic') form.client_id = config.clientId;
    if (endpoint.clientAuthentication === 'form') form.client_secret = config.clientSecret as string;
    if (config.scope !== undefined) form.scope = config.scope;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (endpoint.clientAuthentication === 'basic')
      headers.Authorization = basicAuthorization({
        username: config.clientId,
        password: config.clientSecret as string,
      });
    let response;
    try {
      response = await endpoint.post(form, headers);
    } catch (error) {
      // Typed where it was raised already (a client certificate refused): as it is.
      throw error instanceof Connect2ErpError ? error : endpoint.noAnswer(error);
    }
    const answer = parsed(response.body);
    if (response.status === 200 && typeof answer.access_token === 'string' && answer.access_token !== '') {
      registerSecret(answer.access_token);
      // An hour when it says nothing, or nothing a number (RFC 6749 §5.1 leaves it optional).
      const seconds = Number(answer.expires_in);
      const lifeMs = (Number.isFinite(seconds) ? seconds : 3600) * 1000;
      this.current = { token: answer.access_token, refreshAt: this.now() + lifeMs - Math.min(MARGIN_MS, lifeMs / 2) };
      return answer.access_token;
    }
    const why = typeof answer.error === 'string' ? ` (${answer.error})` : '';
    if (response.status === 429 || response.status >= 500)
      throw endpoint.unavailable(`${where} answered HTTP ${response.status}: not now`, {
        status: response.status,
        target: where,
      });
    throw endpoint.refused(
      `${where} refused the client credentials: HTTP ${response.status}${why}; check ${endpoint.check}`,
      { status: response.status, target: where },
    );
  }
}

function parsed(body: string): Record<string, unknown> {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {};
  }
}
