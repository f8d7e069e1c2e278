import type { Got } from 'got';
import { SystemRefusalError, SystemUnavailableError } from '../../common/errors.js';
import type { TokenEndpoint } from '../oauth/client-credentials.js';
import { certificateRefusal } from './certificate-check.js';

/**
 * An SAP system's token endpoint (`/sap/bc/sec/oauth2/token`, or the BTP service's): the client
 * authenticates with Basic, or with the system's client certificate `certificateFile` (got sends
 * it: `tls.certFile` is the connection's), a certificate SAP refuses told as such; a refusal is
 * the system's (its documents wait, none charged).
 */
export function sapTokenEndpoint(tokenUrl: string, http: Got, system: string, certificateFile?: string): TokenEndpoint {
  const where = `the OAuth token endpoint of ${system} (${tokenUrl})`;
  return {
    post: async (form, headers) => {
      try {
        const response = await http.post(tokenUrl, { form, headers, prefixUrl: '' });
        return { status: response.statusCode, body: response.body };
      } catch (error) {
        throw (certificateFile && certificateRefusal(error, where, system, certificateFile)) || error;
      }
    },
    clientAuthentication: certificateFile === undefined ? 'basic' : 'certificate',
    where,
    check: 'rest.auth (clientId, clientSecret, tokenUrl) in erpHttp.yaml',
    refused: (message, details) => new SystemRefusalError(message, details),
    unavailable: (message, details) => new SystemUnavailableError(message, details),
  };
}
