/** Statuses worth another try: the server is overloaded or a gateway lost it. */
export const TRANSIENT_STATUS = new Set([429, 502, 503, 504]);

/** How a failed repository request is tried again (storage.yaml's retries and retryDelayMs). */
export interface RetryPolicy {
  /** Tries after the first, at most. */
  retries: number;
  /** The longest wait before the first retry, doubled for each one after it. */
  delayMs: number;
  /** The longest Retry-After waited for: a server asking for more than a request may take is left for a later run. */
  maxRetryAfterMs: number;
}

/** An answer with an error status, and its Retry-After header if it had one. */
interface FailedAnswer {
  status: number;
  retryAfter: string | undefined;
}

/**
 * How long to wait after try `attempt` (1 for the first) failed, or undefined for no further try.
 * `answer` is undefined when none came (the connection failed, the answer could not be read).
 *
 * The back-off has full jitter (a uniform wait between 0 and the doubled delay, as in the AWS
 * Architecture Blog's "Exponential Backoff And Jitter"): the job's shards and the content
 * server's replicas share one repository, and those an overload failed together would otherwise
 * all come back together, round after round. Full rather than equal or decorrelated jitter: it
 * spreads the tries widest for the least total work in that comparison. A Retry-After is waited
 * for as asked, without jitter: the server has said when it can take the request.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  answer: FailedAnswer | undefined,
  random: () => number,
  now: number,
): number | undefined {
  if (attempt > policy.retries) return undefined;
  if (answer !== undefined) {
    if (!TRANSIENT_STATUS.has(answer.status)) return undefined;
    const asked = retryAfterMs(answer.retryAfter, now);
    if (asked !== undefined) return asked <= policy.maxRetryAfterMs ? asked : undefined;
  }
  return random() * policy.delayMs * 2 ** (attempt - 1);
}

/** Retry-After is seconds or an HTTP date; anything else counts as not sent. */
function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
