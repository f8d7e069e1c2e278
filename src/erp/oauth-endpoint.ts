import type { Got } from 'got';
import { SystemRefusalError, SystemUnavailableError } from '../../common/errors.js';
import type { TokenEndpoint } from '../oauth/client-credentials.js';
import { ANSWER_MAX_BYTES, ANSWER_MAX_TEXT } from '../bounded-body.js';
import { clientCertificateRefusal } from './certificate-check.js';
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
        // An answer read whole is held to ANSWER_MAX_BYTES, as every answer is: cut off as it comes.
        let tooLarge = false;
        const sent = http.post(tokenUrl, { form, headers, prefixUrl: '' });
        sent.on('downloadProgress', ({ transferred }: { transferred: number }) => {
          if (tooLarge || transferred <= ANSWER_MAX_BYTES) return;
          tooLarge = true;
          sent.cancel();
        });
        const response = await sent.catch((error: unknown) => {
          if (!tooLarge) throw error;
          throw new SystemRefusalError(`${where}: its answer is larger than ${ANSWER_MAX_TEXT}, not a token`, {
            target: where,
          });
        });
        return { status: response.statusCode, body: response.body };
      };
      try {
        return await send();
      } catch (error) {
        if (certificateFile === undefined) throw error;
        let answer: { status: number; body: string } | undefined;
        const again = async (): Promise<void> => void (answer = await send());
        const refused = await clientCertificateRefusal(error, again, where, system, certificateFile);
        if (refused !== undefined) throw refused;
        if (answer === undefined) throw error;
        return answer;
      }
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
