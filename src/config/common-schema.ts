import { z } from 'zod';

/**
 * Pieces shared by the repository and ERP connection schemas. A URL holds no user or password: it
 * is shown in reports, page links and logs, where a credential would be in clear; `auth` holds them.
 */
export const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .refine((url) => !/^[a-z]+:\/\/[^/?#]*@/i.test(url), {
    message:
      'must not hold a user or password (user:password@host): give them under auth, the password as ${env:…} or ${file:…}',
  });

export const basicAuth = z.strictObject({
  username: z.string().min(1),
  password: z.string().min(1),
});

export const tlsSchema = z
  .strictObject({
    /** Verification stays on unless a user turns it off explicitly. */
    rejectUnauthorized: z.boolean().default(true),
    /** PEM file with extra trusted certificates (a private CA). */
    caFile: z.string().min(1).optional(),
    /**
     * A client certificate (mutual TLS): its PEM certificate (with the chain up to the CA the
     * server trusts) and key files, e.g. a Kubernetes Secret mounted as files; `passphrase` for an
     * encrypted key.
     */
    certFile: z.string().min(1).optional(),
    keyFile: z.string().min(1).optional(),
    passphrase: z.string().min(1).optional(),
  })
  .refine((tls) => (tls.certFile === undefined) === (tls.keyFile === undefined), {
    message: 'give certFile and keyFile together: the client certificate and its key',
  })
  .prefault({});

/** Sign in with the client certificate of `tls` (the server maps it to a user), no password. */
export const certificateAuth = z.strictObject({ type: z.literal('certificate') });

export const timeoutsSchema = z
  .strictObject({
    connectMs: z.number().int().positive().default(5_000),
    requestMs: z.number().int().positive().default(30_000),
  })
  .prefault({});

/**
 * How a connection goes out: through this proxy (an `http://` one, as corporate proxies are; its
 * credentials under `auth`), `none` for direct, or, absent, as the environment says (HTTPS_PROXY,
 * HTTP_PROXY, NO_PROXY; src/proxy.ts).
 */
export const proxySchema = z
  .union([z.literal('none'), z.strictObject({ url: httpUrl, auth: basicAuth.optional() })])
  .optional();

/**
 * How a repository connection signs in: a user and password; Nuxeo's token authentication
 * (`X-Authentication-Token`, a token the user acquired); or OAuth 2.0 client credentials (Nuxeo LTS
 * 2025.3 and 2023.31 on, doc.nuxeo.com "Using OAuth2", client credentials flow): a client of the
 * `oauth2Clients` directory, whose id is also the name of the user its tokens act as. `tokenUrl`
 * defaults to the server's `/oauth2/token`.
 */
export const repositoryAuthSchema = z.discriminatedUnion('type', [
  basicAuth.extend({ type: z.literal('basic') }),
  z.strictObject({ type: z.literal('token'), token: z.string().min(1) }),
  z.strictObject({
    type: z.literal('oauth2'),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    tokenUrl: httpUrl.optional(),
  }),
]);
