import { readFileSync } from 'node:fs';
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import type { z } from 'zod';
import type { basicAuth, timeoutsSchema, tlsSchema } from './config/common-schema.js';
import { registerSecret } from './log.js';
import { proxyAuthorization, proxyFor, type Proxy, type ProxySetting } from './proxy.js';

/** What a connection to one server is configured with. */
export interface ConnectionConfig {
  timeouts: z.infer<typeof timeoutsSchema>;
  tls: z.infer<typeof tlsSchema>;
  proxy?: ProxySetting;
}

/** The `Proxy-Authorization` value for a proxy with credentials, masked in logs like a password. */
export function proxyToken(proxy: Proxy): string | undefined {
  const token = proxyAuthorization(proxy);
  if (token !== undefined) registerSecret(token.slice('Basic '.length));
  return token;
}

/** Node's codes for a server certificate that failed verification. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A URL as output may show it: no user name or password (an URL may carry them). */
export function withoutCredentials(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return shown.href;
}

/** undici's codes for an answer that did not begin, or paused, for longer than `requestMs`. */
const TIMED_OUT = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The code of a failure without an answer: a time-out reads as ETIMEDOUT (as got tells it), one without a code by its error's name. */
export function failureCode(error: Error & { code?: string }): string {
  if (error.code !== undefined && TIMED_OUT.has(error.code)) return 'ETIMEDOUT';
  return error.code ?? error.name;
}

/** What went wrong, in words: an AggregateError (one try per address of the host, Node's autoSelectFamily) has them in its errors. */
export function failureText(error: Error): string {
  if (error instanceof AggregateError && error.message === '')
    return (error.errors as Error[]).map((each) => each.message).join('; ');
  return error.message;
}

/** The connection failed because the server's certificate was not trusted. */
export function certificateRefused(error: unknown): boolean {
  return CERTIFICATE_CODES.has((error as { code?: string }).code ?? '');
}

/** The private CA of `tls.caFile`, when one is configured; Node's trusted roots otherwise. */
export function certificateAuthority(tls: z.infer<typeof tlsSchema>): Buffer | undefined {
  return tls.caFile === undefined ? undefined : readFileSync(tls.caFile);
}

/** The client certificate of `tls.certFile` and `tls.keyFile` (mutual TLS), when one is configured. */
export function clientCertificate(
  tls: z.infer<typeof tlsSchema>,
): { cert: Buffer; key: Buffer; passphrase?: string } | undefined {
  // The schema gives keyFile with certFile.
  if (tls.certFile === undefined) return undefined;
  if (tls.passphrase !== undefined) registerSecret(tls.passphrase);
  return { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile as string), passphrase: tls.passphrase };
}

/**
 * undici's options for the same settings: the time-out is its own pair, set once on the pool (the
 * answer must begin within `requestMs` and never pause longer than that); a deadline of our own,
 * an AbortController and a timer per request, cost measurably more CPU (BENCHMARKS.md, "What was
 * changed in the job").
 */
function agentOptions(config: ConnectionConfig): Agent.Options {
  return {
    headersTimeout: config.timeouts.requestMs,
    bodyTimeout: config.timeouts.requestMs,
    connect: {
      timeout: config.timeouts.connectMs,
      rejectUnauthorized: config.tls.rejectUnauthorized,
      ca: certificateAuthority(config.tls),
      ...clientCertificate(config.tls),
    },
  };
}

/**
 * undici's dispatcher for one server (the repository, a SOAP-RFC service): direct, or through the
 * connection's proxy with a CONNECT tunnel, the server's TLS settings and time-outs kept.
 */
export function dispatcherFor(target: string, config: ConnectionConfig): Dispatcher {
  const options = agentOptions(config);
  const proxy = proxyFor(target, config.proxy);
  if (proxy === undefined) return new Agent(options);
  const token = proxyToken(proxy);
  return new ProxyAgent({
    ...options,
    uri: proxy.url,
    ...(token === undefined ? {} : { token }),
    requestTls: options.connect as ProxyAgent.Options['requestTls'],
    proxyTls: { timeout: config.timeouts.connectMs },
  });
}

/** An address as a dispatcher's request takes it: its origin, and its path with its query. */
export function requestTarget(url: URL): { origin: string; path: string } {
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
}

/** The `Authorization` header value for Basic auth; its encoded credentials are masked in logs like the password. */
export function basicAuthorization(auth: z.infer<typeof basicAuth>): string {
  const credentials = Buffer.from(`${auth.username}:${auth.password}`).toString('base64');
  registerSecret(credentials);
  return `Basic ${credentials}`;
}
