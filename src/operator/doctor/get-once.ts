import { Agent, type Dispatcher } from 'undici';
import { requestTarget } from '../../http-options.js';

/**
 * One GET on a pool of its own, closed once `read` has the answer: a check's single call, with
 * the time-outs it allows for the answer to begin and for each pause in its body. undici's
 * dispatcher API (Agent), as the job's clients use it, rather than its global `request`, so that
 * the image's bundle carries undici's dispatchers alone (deploy/undici-entry.cjs).
 */
export async function getOnce<T>(
  url: URL,
  timeoutMs: number,
  read: (answer: Dispatcher.ResponseData) => Promise<T>,
): Promise<T> {
  const agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const answer = await agent.request({ ...requestTarget(url), method: 'GET' });
    return await read(answer);
  } finally {
    // Nothing else goes through it; destroy rather than close, which would wait on a body not read.
    await agent.destroy();
  }
}
