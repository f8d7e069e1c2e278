import type { Dispatcher } from 'undici';
import { AuthenticationError, TransientError, UntrustedServerError } from '../../common/errors.js';
import { certificateRefused, failureCode, failureText, requestTarget } from '../http-options.js';
import { ANSWER_MAX_TEXT, readBounded } from '../bounded-body.js';
import type { TokenEndpoint } from '../oauth/client-credentials.js';

/**
 * Nuxeo's token endpoint (`POST <server>/oauth2/token`, doc.nuxeo.com "Using OAuth2", client
 * credentials flow): the client's id and secret go as parameters, in the form body rather than the
 * documented query string, so that no proxy or access log keeps the secret (the servlet reads both
 * alike: `request.getParameter`). A refusal stops the run, as refused credentials do.
 */
export function nuxeoTokenEndpoint(tokenUrl: string, dispatcher: Dispatcher): TokenEndpoint {
  const where = `the repository's OAuth token endpoint (${tokenUrl})`;
  return {
    post: async (form, headers) => {
      const response = await dispatcher.request({
        ...requestTarget(new URL(tokenUrl)),
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
      const body = await readBounded(response.body);
      if (body === undefined)
        throw new AuthenticationError(`${where}: its answer is larger than ${ANSWER_MAX_TEXT}, not a token`, {
          target: where,
        });
      return { status: response.statusCode, body: body.toString('utf8') };
    },
    clientAuthentication: 'form',
    where,
    check:
      'the OAuth client of auth in storage.yaml (or repositoryAuth in contentServer.yaml): clientId, clientSecret, tokenUrl; and that a user of the client id exists',
    refused: (message, details) => new AuthenticationError(message, details),
    unavailable: (message, details) => new TransientError(message, details),
    noAnswer: (error) =>
      certificateRefused(error)
        ? new UntrustedServerError(
            `${where} failed: its TLS certificate is not trusted (${failureCode(error as Error)}); check tls.caFile in storage.yaml`,
            { target: where },
          )
        : new TransientError(`${where} did not answer: ${failureText(error as Error)}`, { target: where }),
  };
}
