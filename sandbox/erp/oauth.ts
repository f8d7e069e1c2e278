import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basicCredentials, readBody, sendJson } from '../http.js';
import type { Customizing } from './customizing.js';

/** SAP NetWeaver's OAuth 2.0 token endpoint (help.sap.com, "OAuth 2.0 … Token Endpoint"; S/4HANA Cloud communication arrangements use it too). */
export const TOKEN_PATH = '/sap/bc/sec/oauth2/token';

/**
 * OAuth 2.0 client credentials as an authorisation server answers them (RFC 6749 §4.4, §5.1, §5.2):
 * the client authenticates with Basic (§2.3.1); a token is issued for the client's user with
 * `expires_in`, and a request with `Authorization: Bearer` is the user's until it expires (RFC 6750
 * §3.1: 401 `invalid_token` after). `now` is the server's clock, which a test moves on.
 */
export class TokenIssuer {
  /** Tokens issued so far, for tests to count. */
  issued = 0;
  now: () => number = Date.now;
  private readonly tokens = new Map<string, { user: string; expiresAt: number }>();

  constructor(private readonly customizing: Customizing) {}

  /** Answers a token request. */
  async issue(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams((await readBody(req)).toString('utf8'));
    const credentials = basicCredentials(req);
    const client = credentials === undefined ? undefined : this.customizing.oauthClients[credentials.name];
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request' });
    if (client === undefined || client.secret !== credentials?.password)
      return sendJson(res, 401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'client_credentials') return sendJson(res, 400, { error: 'unsupported_grant_type' });
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { user: client.user, expiresAt: this.now() + client.lifetimeS * 1000 });
    this.issued++;
    sendJson(res, 200, { access_token: token, token_type: 'Bearer', expires_in: client.lifetimeS });
  }

  /** The user a bearer token stands for, undefined when it is unknown or expired. */
  user(req: IncomingMessage): string | undefined {
    // Asked only of a request whose Authorization starts with `Bearer ` (server.ts).
    const token = this.tokens.get(String(req.headers.authorization).slice('Bearer '.length));
    return token !== undefined && this.now() < token.expiresAt ? token.user : undefined;
  }
}
