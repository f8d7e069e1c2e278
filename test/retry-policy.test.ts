import t from 'tap';
import { retryDelay, type RetryPolicy } from '../src/repository/retry-policy.js';

/** The repository client's retry policy alone: a fixed clock, and the random drawn given. */

const POLICY: RetryPolicy = { retries: 3, delayMs: 1000, maxRetryAfterMs: 30_000 };
const NOW = Date.parse('2026-12-07T12:00:00Z');
const half = (): number => 0.5;
const status = (code: number, retryAfter?: string) => ({ status: code, retryAfter });

t.test('429, 502, 503 and 504 are tried again; other statuses are not', async (t) => {
  for (const code of [429, 502, 503, 504]) t.equal(retryDelay(POLICY, 1, status(code), half, NOW), 500, `${code}`);
  for (const code of [400, 401, 403, 404, 409, 500, 501])
    t.equal(retryDelay(POLICY, 1, status(code), half, NOW), undefined, `${code}`);
});

t.test('no answer at all (a connection failure) is tried again with the back-off', async (t) => {
  t.equal(retryDelay(POLICY, 1, undefined, half, NOW), 500);
});

t.test('the back-off doubles at each try, up to `retries` tries after the first', async (t) => {
  t.same(
    [1, 2, 3, 4].map((attempt) => retryDelay(POLICY, attempt, undefined, half, NOW)),
    [500, 1000, 2000, undefined],
  );
  t.equal(retryDelay({ ...POLICY, retries: 0 }, 1, undefined, half, NOW), undefined, 'retries: 0 sends once');
});

t.test('full jitter: a wait anywhere from 0 up to the doubled delay', async (t) => {
  t.equal(
    retryDelay(POLICY, 3, undefined, () => 0, NOW),
    0,
    'the least',
  );
  const most = retryDelay(POLICY, 3, undefined, () => 1 - Number.EPSILON, NOW) as number;
  t.ok(most < 4000 && most > 3999, 'just under 4 × retryDelayMs on the third try');
  t.equal(
    retryDelay(POLICY, 3, status(503), () => 0.25, NOW),
    1000,
    'a status without Retry-After too',
  );
});

t.test('Retry-After in seconds is waited for as asked, without jitter', async (t) => {
  t.equal(retryDelay(POLICY, 1, status(429, '2'), half, NOW), 2000);
  t.equal(retryDelay(POLICY, 2, status(503, ' 7 '), half, NOW), 7000, 'blanks around it');
  t.equal(retryDelay(POLICY, 1, status(503, '0'), half, NOW), 0);
});

t.test('Retry-After as an HTTP date is waited for until then; one past is not waited for', async (t) => {
  t.equal(retryDelay(POLICY, 1, status(503, 'Mon, 07 Dec 2026 12:00:05 GMT'), half, NOW), 5000);
  t.equal(retryDelay(POLICY, 1, status(429, 'Mon, 07 Dec 2026 11:59:00 GMT'), half, NOW), 0);
});

t.test(
  'a Retry-After beyond the request time-out gives up; one that is no time falls back to the back-off',
  async (t) => {
    t.equal(retryDelay(POLICY, 1, status(429, '30'), half, NOW), 30_000, 'up to the cap');
    t.equal(retryDelay(POLICY, 1, status(429, '31'), half, NOW), undefined, 'left for a later run');
    t.equal(retryDelay(POLICY, 1, status(503, 'Mon, 07 Dec 2026 13:00:00 GMT'), half, NOW), undefined, 'a date too');
    t.equal(retryDelay(POLICY, 1, status(503, 'soon'), half, NOW), 500);
  },
);

t.test('Retry-After changes neither the limit nor the statuses', async (t) => {
  t.equal(retryDelay(POLICY, 4, status(429, '1'), half, NOW), undefined, 'retries out');
  t.equal(retryDelay(POLICY, 1, status(500, '1'), half, NOW), undefined, 'a status not tried again');
});
