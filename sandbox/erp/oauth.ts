import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TLSSocket } from 'node:tls';
import { basicCredentials, readBody, sendJson } from '../http.js';
import type { Customizing } from './customizing.js';

/** SAP NetWeaver's OAuth 2.0 token endpoint (help.sap.com, "OAuth 2.0 … Token Endpoint"; S/4HANA Cloud communication arrangements use it too). */
export const TOKEN_PATH = '/sap/bc/sec/oauth2/token';

/**
 * OAuth 2.0 client credentials as an authorisation server answers them (RFC 6749 §4.4, §5.1, §5.2):
 * the client authenticates with Basic (§2.3.1) or its TLS certificate (RFC 8705 §2.1.2); a token is issued for the client's user with
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
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request' });
    const client = this.client(req, form);
    if (client === undefined) return sendJson(res, 401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'client_credentials') return sendJson(res, 400, { error: 'unsupported_grant_type' });
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { user: client.user, expiresAt: this.now() + client.lifetimeS * 1000 });
    this.issued++;
    sendJson(res, 200, { access_token: token, token_type: 'Bearer', expires_in: client.lifetimeS });
  }

  /**
   * The client that authenticated: with Basic (its id and secret), or, without, with its id in the
   * form and a TLS certificate of the subject it is registered with (RFC 8705 §2.1.2, tls_client_auth).
   */
  private client(req: IncomingMessage, form: URLSearchParams): Customizing['oauthClients'][string] | undefined {
    const credentials = basicCredentials(req);
    if (credentials !== undefined) {
      const client = this.customizing.oauthClients[credentials.name];
      return client?.secret !== undefined && client.secret === credentials.password ? client : undefined;
    }
    const client = this.customizing.oauthClients[form.get('client_id') ?? ''];
    const subject = certificateSubject(req);
    return client?.certificate !== undefined && client.certificate === subject ? client : undefined;
  }

  /** The user a bearer token stands for, undefined when it is unknown or expired. */
  user(req: IncomingMessage): string | undefined {
    // Asked only of a request whose Authorization starts with `Bearer ` (server.ts).
    const token = this.tokens.get(String(req.headers.authorization).slice('Bearer '.length));
    return token !== undefined && this.now() < token.expiresAt ? token.user : undefined;
  }
}

/** The subject of a TLS client certificate the server verified, leaf first as SAP writes it (`CN=…, O=…`). */
export function certificateSubject(req: IncomingMessage): string | undefined {
  if (!(req.socket instanceof TLSSocket) || !req.socket.authorized) return undefined;
  // Node writes the subject root first, one attribute a line.
  return req.socket.getPeerX509Certificate()?.subject.split('\n').reverse().join(', ');
}
