import type { z } from 'zod';
import type { proxySchema } from './config/common-schema.js';

/** A connection's `proxy` setting: its own proxy, `none`, or (absent) the environment's. */
export type ProxySetting = z.infer<typeof proxySchema>;

/** A proxy to go through: its address, and the credentials it asks for. */
export interface Proxy {
  url: string;
  auth?: { username: string; password: string };
}

/**
 * The proxy a connection to `target` goes through: the connection's own setting, else the
 * environment's as curl reads it — HTTPS_PROXY (or https_proxy) for an https target, HTTP_PROXY
 * for an http one, NO_PROXY's hosts, domains (`.example.com` or `example.com`, which includes its
 * subdomains), `host:port` and `*` going direct. Undefined: direct.
 */
export function proxyFor(
  target: string,
  setting: ProxySetting,
  env: NodeJS.ProcessEnv = process.env,
): Proxy | undefined {
  if (setting === 'none') return undefined;
  if (setting !== undefined) return setting;
  const url = new URL(target);
  const proxy = url.protocol === 'https:' ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  if (proxy === undefined || proxy === '' || bypassed(url, env.NO_PROXY ?? env.no_proxy ?? '')) return undefined;
  return { url: proxy };
}

function bypassed(url: URL, noProxy: string): boolean {
  const host = url.hostname.toLowerCase();
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return noProxy
    .split(/[,\s]+/)
    .filter((entry) => entry !== '')
    .some((entry) => {
      if (entry === '*') return true;
      const [, name, entryPort] = /^(.*?)(?::(\d+))?$/.exec(entry.toLowerCase()) as RegExpExecArray;
      const domain = name.replace(/^\*?\./, '');
      return (entryPort === undefined || entryPort === port) && (host === domain || host.endsWith(`.${domain}`));
    });
}

/** The `Proxy-Authorization` value for a proxy's credentials. */
export const proxyAuthorization = (proxy: Proxy): string | undefined =>
  proxy.auth === undefined
    ? undefined
    : `Basic ${Buffer.from(`${proxy.auth.username}:${proxy.auth.password}`).toString('base64')}`;
