import type { Got } from 'got';
import { SystemRefusalError, SystemUnavailableError } from '../../common/errors.js';
import type { OAuth2Config } from '../config/erp-schema.js';
import { basicAuthorization } from '../http-options.js';
import { registerSecret } from '../log.js';

/** How long before its end a token is replaced: a minute, or half its life when it is shorter. */
const MARGIN_MS = 60_000;

/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) for one SAP system: a token fetched from the token
 * endpoint with the client's id and secret (Basic, §2.3.1), kept until shortly before it expires
 * (`expires_in`, §5.1), fetched once for every caller waiting, and dropped when SAP refuses it. The
 * secret and the tokens are masked in logs like passwords.
 */
export class ClientCredentials {
  private current: { token: string; refreshAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly authorization: string;

  constructor(
    private readonly config: OAuth2Config,
    private readonly http: Got,
    private readonly system: string,
    private readonly now: () => number = Date.now,
  ) {
    registerSecret(config.clientSecret);
    this.authorization = basicAuthorization({ username: config.clientId, password: config.clientSecret });
  }

  /** A token to send, fetched when there is none or the one held is about to expire. */
  token(): Promise<string> {
    if (this.current !== undefined && this.now() < this.current.refreshAt) return Promise.resolve(this.current.token);
    this.pending ??= this.fetch().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** SAP refused the token (expired or revoked early): the next caller fetches a new one. */
  refused(): void {
    this.current = undefined;
  }

  private async fetch(): Promise<string> {
    const where = `the OAuth token endpoint of ${this.system} (${this.config.tokenUrl})`;
    const form = { grant_type: 'client_credentials', ...(this.config.scope ? { scope: this.config.scope } : {}) };
    let response;
    try {
      response = await this.http.post(this.config.tokenUrl, {
        form,
        headers: { Authorization: this.authorization, Accept: 'application/json' },
        prefixUrl: '',
      });
    } catch (error) {
      throw new SystemUnavailableError(`${where} did not answer: ${(error as Error).message}`, { target: where });
    }
    const answer = parsed(response.body);
    if (response.statusCode === 200 && typeof answer.access_token === 'string' && answer.access_token !== '') {
      registerSecret(answer.access_token);
      const lifeMs = Number(answer.expires_in ?? 3600) * 1000;
      this.current = { token: answer.access_token, refreshAt: this.now() + lifeMs - Math.min(MARGIN_MS, lifeMs / 2) };
      return answer.access_token;
    }
    const why = typeof answer.error === 'string' ? ` (${answer.error})` : '';
    throw new SystemRefusalError(
      `${where} refused the client credentials: HTTP ${response.statusCode}${why}; check rest.auth (clientId, clientSecret, tokenUrl) in erpHttp.yaml`,
      { status: response.statusCode, target: where },
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
