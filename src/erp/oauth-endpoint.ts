import type { Got } from 'got';
import { SystemRefusalError, SystemUnavailableError } from '../../common/errors.js';
import type { TokenEndpoint } from '../oauth/client-credentials.js';

/**
 * An SAP system's token endpoint (`/sap/bc/sec/oauth2/token`, or the BTP service's): the client
 * authenticates with Basic; a refusal is the system's (its documents wait, none charged).
 */
export function sapTokenEndpoint(tokenUrl: string, http: Got, system: string): TokenEndpoint {
  return {
    post: async (form, headers) => {
      const response = await http.post(tokenUrl, { form, headers, prefixUrl: '' });
      return { status: response.statusCode, body: response.body };
    },
    clientAuthentication: 'basic',
    where: `the OAuth token endpoint of ${system} (${tokenUrl})`,
    check: 'rest.auth (clientId, clientSecret, tokenUrl) in erpHttp.yaml',
    refused: (message, details) => new SystemRefusalError(message, details),
    unavailable: (message, details) => new SystemUnavailableError(message, details),
  };
}
