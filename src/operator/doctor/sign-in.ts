import type { ErpSystemConfig } from '../../config/erp-schema.js';

type Auth = NonNullable<ErpSystemConfig['rfc']>['auth'] | NonNullable<ErpSystemConfig['rest']>['auth'];

/** Who a connection signs in as, for doctor's lines: a user, an OAuth client, or a client certificate's file. */
export function signedInAs(auth: Auth, system: ErpSystemConfig): string {
  if (!('type' in auth)) return `user ${auth.username}`;
  return auth.type === 'oauth2' ? `OAuth client ${auth.clientId}` : `client certificate ${system.tls.certFile}`;
}
