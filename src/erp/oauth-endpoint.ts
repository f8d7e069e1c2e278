import type { Got } from 'got';
import { SystemRefusalError, SystemUnavailableError } from '../../common/errors.js';
import type { TokenEndpoint } from '../oauth/client-credentials.js';
import { ANSWER_MAX_TEXT, heldToAnswerLimit } from '../bounded-body.js';
import { sentWithCertificate } from './certificate-check.js';
import { certificateRefused, failureText } from '../http-options.js';
import { networkFailure } from './failure.js';

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
      const send = async (): Promise<{ status: number; body: string }> => {
        const response = await heldToAnswerLimit(
          http.post(tokenUrl, { form, headers, prefixUrl: '' }),
          (error, tooLarge) =>
            tooLarge
              ? new SystemRefusalError(`${where}: its answer is larger than ${ANSWER_MAX_TEXT}, not a token`, {
                  target: where,
                })
              : (error as Error),
        );
        return { status: response.statusCode, body: response.body };
      };
      return certificateFile === undefined ? send() : sentWithCertificate(send, where, system, certificateFile);
    },
    clientAuthentication: certificateFile === undefined ? 'basic' : 'certificate',
    where,
    check: 'rest.auth (clientId, clientSecret, tokenUrl) in erpHttp.yaml',
    refused: (message, details) => new SystemRefusalError(message, details),
    unavailable: (message, details) => new SystemUnavailableError(message, details),
    noAnswer: (error) =>
      certificateRefused(error)
        ? networkFailure(error, where, system)
        : new SystemUnavailableError(`${where} did not answer: ${failureText(error as Error)}`, { target: where }),
  };
}
