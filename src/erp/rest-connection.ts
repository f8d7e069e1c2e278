import { HttpsProxyAgent } from 'https-proxy-agent';
import { certificateAuthority, clientCertificate, proxyToken, type ConnectionConfig } from '../http-options.js';
import { proxyFor, type Proxy } from '../proxy.js';

/**
 * got options (the Rest client's) for the ERP's time-outs and TLS settings. `requestMs` is an idle time-out, as the
 * repository's is: the answer must begin within it and the connection never pause for longer, so
 * a large upload or answer on a slow link is not cut off while it keeps moving (a deadline on the
 * whole call would cut it off on every retry).
 */
export function connectionOptions(target: string, config: ConnectionConfig) {
  const proxy = proxyFor(target, config.proxy);
  const client = clientCertificate(config.tls);
  return {
    timeout: { connect: config.timeouts.connectMs, socket: config.timeouts.requestMs },
    https: {
      rejectUnauthorized: config.tls.rejectUnauthorized,
      certificateAuthority: certificateAuthority(config.tls),
      ...(client === undefined ? {} : { certificate: client.cert, key: client.key, passphrase: client.passphrase }),
    },
    ...(proxy === undefined ? {} : { agent: tunnelAgents(proxy) }),
  };
}

/** got's agents through a proxy: a CONNECT tunnel for an http target as for an https one (https-proxy-agent). */
function tunnelAgents(proxy: Proxy): { http: HttpsProxyAgent<string>; https: HttpsProxyAgent<string> } {
  const token = proxyToken(proxy);
  const agent = new HttpsProxyAgent(
    proxy.url,
    token === undefined ? {} : { headers: { 'Proxy-Authorization': token } },
  );
  return { http: agent, https: agent };
}
