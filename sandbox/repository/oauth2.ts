import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basicCredentials, readBody, sendJson } from '../http.js';

/** Where Nuxeo answers token requests (doc.nuxeo.com, "Using OAuth2": `POST https://NUXEO_SERVER/nuxeo/oauth2/token`). */
export const NUXEO_TOKEN_PATH = '/oauth2/token';

/** An entry of the `oauth2Clients` directory (schema oauth2client: clientId, clientSecret, enabled). */
interface OAuth2Client {
  secret: string;
  enabled: boolean;
}

/**
 * Nuxeo's OAuth 2.0 client credentials flow (LTS 2025.3 and 2023.31 on), from its documentation and,
 * where that is silent, the token endpoint of nuxeo/nuxeo 2023 (NuxeoOAuth2Servlet, TokenRequest,
 * OAuth2Error), which the older grants share:
 * - POST only; parameters `grant_type`, `client_id`, `client_secret` read as the servlet reads them,
 *   from the query string or a form body, a Basic header taking their place when sent;
 * - a wrong secret or a disabled client: 400 `invalid_client`; no client id: 400 `invalid_request`;
 *   another grant: 400 `unsupported_grant_type`;
 * - the token acts as the user named as the client id ("a user must exist with this client id");
 *   where there is none the documentation says nothing: refused as `invalid_client`, the stricter reading;
 * - `{"access_token", "expires_in", "token_type": "bearer"}`, the lifetime
 *   `nuxeo.oauth2.token.expiration.duration` (60m by default);
 * - a bearer token unknown or expired: 401, the servlet container's page (NuxeoOAuth2Authenticator
 *   passes, and the REST chain's Basic refuses).
 * `now` is the server's clock, which a test moves on.
 */
export class NuxeoTokens {
  readonly clients = new Map<string, OAuth2Client>();
  lifetimeS = 3600;
  issued = 0;
  now: () => number = Date.now;
  private readonly tokens = new Map<string, { user: string; expiresAt: number }>();

  constructor(private readonly userExists: (name: string) => boolean) {}

  async issue(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request' });
    const form = new URLSearchParams((await readBody(req)).toString('utf8'));
    const param = (name: string): string | null => url.searchParams.get(name) ?? form.get(name);
    const basic = basicCredentials(req);
    const id = basic?.name ?? param('client_id');
    const secret = basic?.password ?? param('client_secret');
    if (param('grant_type') !== 'client_credentials')
      return sendJson(res, 400, { error: 'unsupported_grant_type', error_description: 'Unsupported grant type' });
    if (id === null || id === '')
      return sendJson(res, 400, { error: 'invalid_request', error_description: 'Missing client_id' });
    const client = this.clients.get(id);
    if (client === undefined || !client.enabled || client.secret !== secret || !this.userExists(id))
      return sendJson(res, 400, {
        error: 'invalid_client',
        error_description: 'Disabled client or invalid client secret',
      });
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { user: id, expiresAt: this.now() + this.lifetimeS * 1000 });
    this.issued++;
    sendJson(res, 200, { access_token: token, expires_in: this.lifetimeS - 1, token_type: 'bearer' });
  }

  /** The user a bearer token acts as; undefined when it is unknown or expired. */
  user(authorization: string): string | undefined {
    const token = this.tokens.get(authorization.slice('Bearer '.length));
    return token !== undefined && this.now() < token.expiresAt ? token.user : undefined;
  }
}
