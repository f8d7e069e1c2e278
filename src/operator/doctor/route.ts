import { withoutCredentials } from '../../http-options.js';
import { proxyFor, type ProxySetting } from '../../proxy.js';

/** How a connection goes out, for doctor's lines: `, through proxy http://…` (no credentials), or nothing when direct. */
export function throughProxy(target: string, setting: ProxySetting): string {
  const proxy = proxyFor(target, setting);
  return proxy === undefined ? '' : `, through proxy ${withoutCredentials(proxy.url).replace(/\/$/, '')}`;
}
