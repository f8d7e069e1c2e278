import type { RequestError, TimeoutError } from 'got';
import {
  PermanentError,
  SystemRefusalError,
  SystemUnavailableError,
  UncertainError,
  type Connect2ErpError,
} from '../../common/errors.js';
import { certificateRefused, failureCode, failureText } from '../http-options.js';
import { ANSWER_MAX_TEXT } from '../bounded-body.js';

/** Failures where the request never reached the server: safe to send again (undici's connect time-out among them). */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** got's phases of a time-out before the request was sent (the Rest client). */
const BEFORE_SENDING = new Set(['lookup', 'connect', 'secureConnect']);

/**
 * A network error or time-out of one ERP call (got's or undici's), typed by whether SAP may have
 * received it: a call that never reached SAP says the system is unavailable, one that left and got
 * no answer is uncertain (the document's: SAP is asked later). An untrusted certificate is the
 * system's refusal.
 */
export function networkFailure(error: unknown, where: string, system: string): Connect2ErpError {
  const { code } = error as RequestError;
  const message = failureText(error as Error);
  if (certificateRefused(error)) {
    return new SystemRefusalError(
      `${where} failed: SAP's TLS certificate is not trusted (${code}: ${message}); check tls.caFile of system ${system} in erpHttp.yaml`,
      { target: where },
    );
  }
  const event = (error as TimeoutError).event;
  const text = `${where} failed (${failureCode(error as Error)}): ${message}`;
  if (NOT_SENT.has(code) || BEFORE_SENDING.has(event)) return new SystemUnavailableError(text, { target: where });
  return new UncertainError(text, { target: where });
}

/**
 * An HTTP status without a business answer: 429, 502 and 503 come from a server that did not
 * take the request (the system is unavailable, not the document); a bare 500 or 504 may come
 * after the work was done; anything else is final.
 */
export function statusFailure(status: number, where: string, hint = ''): Error {
  const details = { status, target: where };
  if (status === 429 || status === 502 || status === 503)
    return new SystemUnavailableError(`${where} failed with HTTP ${status}`, details);
  if (status >= 500) return new UncertainError(`${where} failed with HTTP ${status}`, details);
  return new PermanentError(`${where} failed with HTTP ${status}${hint}`, details);
}

/**
 * SAP's answer was larger than the client holds (ANSWER_MAX_BYTES) and was not read: the call
 * reached SAP and may have done its work, so the document is looked up later, as after a lost answer.
 */
export const answerTooLarge = (where: string): UncertainError =>
  new UncertainError(
    `${where}: SAP's answer is larger than ${ANSWER_MAX_TEXT}, not read; the call may have done its work`,
    {
      target: where,
    },
  );
