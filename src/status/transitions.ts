import { STATUS } from './facet.js';
import { READINESS_KEYS } from './readiness.js';

/**
 * The properties each move of a document's status writes, so that every writer moves it the same
 * way. A claim says which attempt works on a document and until when; it is written with the
 * document's changeToken, so a 409 means another run claimed it first, and once it expires any
 * run may take the document over.
 */

type Properties = Record<string, unknown>;

/**
 * The tokens a run's claims carry: its id and, after a slash, the claim's number in the run. A
 * token names one attempt, so a run never takes another run's claim, or another of its own
 * claims, for the one it wrote (take.ts reads a document again after a 409).
 */
export function claimTokens(runId: string): () => string {
  let claims = 0;
  return () => `${runId}/${++claims}`;
}

/** The run a claim token belongs to, for messages. */
export const runOf = (token: unknown): string => String(token).split('/')[0];

/** A claim given up, written together with the outcome. */
export const UNCLAIMED = { [STATUS.claimedBy]: null, [STATUS.claimExpires]: null };

/** The claim `token`, holding for `ms` from `at` (the intake's claim before a folder is made). */
export function claim(token: string, at: Date, ms: number): Properties {
  return { [STATUS.claimedBy]: token, [STATUS.claimExpires]: new Date(at.getTime() + ms).toISOString() };
}

/**
 * Labelled by the intake: READY, or waiting for the values still `missing`. The claim the intake
 * held ends in the same write, or becomes its task's (src/job/claims/claims.ts `label`).
 */
export function afterLabelling(missing: string[]): Properties {
  return {
    [STATUS.status]: missing.length === 0 ? 'READY' : 'PENDING_INPUT',
    [STATUS.message]: missing.length === 0 ? null : waitingFor(missing),
    [STATUS.attempts]: 0,
  };
}

const WAITING = 'waiting for ';
const ALL_READINESS_KEYS = new Set(Object.values(READINESS_KEYS).flat());
export const waitingFor = (missing: string[]): string => `${WAITING}${missing.join(', ')}`;

/** A message that only lists values a user has to give (`waitingFor`), which the ERP tab says in its own words. */
export const waitsForValues = (message: string): boolean =>
  message.startsWith(WAITING) &&
  message
    .slice(WAITING.length)
    .split(', ')
    .every((key) => ALL_READINESS_KEYS.has(key));

/** Waiting for a user to fill in values; `message` says which. */
export const pendingInput = (message: string): Properties => ({
  [STATUS.status]: 'PENDING_INPUT',
  [STATUS.message]: message,
});

/** Claimed by a task's attempt `token` just before its call goes out. */
export function inProgress(token: string, task: string, at: Date, ms: number): Properties {
  return {
    [STATUS.status]: 'IN_PROGRESS',
    [STATUS.task]: task,
    ...claim(token, at, ms),
    [STATUS.lastAttempt]: at.toISOString(),
  };
}

/**
 * The longest text the status facet keeps in `message` or `erpReference`: what a person reads on
 * the ERP tab and in the reports. A longer one (an SAP message, a value quoted in it) is cut there.
 */
export const STATUS_TEXT_MAX = 1_000;

const cut = (text: string): string => (text.length <= STATUS_TEXT_MAX ? text : `${text.slice(0, STATUS_TEXT_MAX)}…`);

/** SAP has it: `reference` is what SAP answered with. */
export function done(reference: string | undefined, message: string | undefined): Properties {
  return {
    ...UNCLAIMED,
    [STATUS.status]: 'DONE',
    [STATUS.message]: message === undefined ? null : cut(message),
    [STATUS.erpReference]: reference === undefined ? undefined : cut(reference),
    [STATUS.nextAttempt]: null,
  };
}

/** An attempt that failed: RETRY at `retryAt`, or FAILED for an operator when there is none. */
export function attemptFailed(message: string, attempts: number, retryAt: Date | undefined): Properties {
  return {
    ...UNCLAIMED,
    [STATUS.status]: retryAt === undefined ? 'FAILED' : 'RETRY',
    [STATUS.message]: cut(message),
    [STATUS.attempts]: attempts,
    [STATUS.nextAttempt]: retryAt?.toISOString() ?? null,
  };
}

/** Left for an operator, with why. */
export const failed = (message: string): Properties => ({ [STATUS.status]: 'FAILED', [STATUS.message]: cut(message) });

/** Back to READY, unsent: the claim is given up. */
export const released = (): Properties => ({ ...UNCLAIMED, [STATUS.status]: 'READY' });

/** Put back by an operator (`connect2erp retry`): READY with a fresh count of attempts. */
export const putBack = (): Properties => ({
  ...released(),
  [STATUS.attempts]: 0,
  [STATUS.message]: null,
  [STATUS.nextAttempt]: null,
});
