import type { CancelableRequest } from 'got';
import type { Dispatcher } from 'undici';

/**
 * The most an answer read whole may hold (a page of documents, a SOAP answer, a mapping file).
 * Ordinary answers are a few hundred kilobytes; one far larger carries a value nobody meant, and
 * held and parsed in each call in flight it would grow the process past its pod's memory.
 */
export const ANSWER_MAX_BYTES = 4 * 1024 * 1024;
export const ANSWER_MAX_TEXT = `${ANSWER_MAX_BYTES / (1024 * 1024)} MiB`;

/**
 * An answer's body read whole, or undefined (the connection closed) once it passes ANSWER_MAX_BYTES.
 * Read by its events rather than an async iterator: three answers a link, the iterator's promises
 * per chunk cost more than the reading.
 */
export async function readBounded(body: Dispatcher.ResponseData['body']): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= ANSWER_MAX_BYTES) return void chunks.push(chunk);
      body.destroy();
      resolve(undefined);
    });
    body.on('end', () => resolve(Buffer.concat(chunks)));
    body.on('error', reject);
  });
}

/**
 * A got answer read whole, held to ANSWER_MAX_BYTES as undici's are: cut off as it comes. A failure
 * is given to `failed` with whether the answer was cut off, for the caller to type.
 */
export async function heldToAnswerLimit<T>(
  sent: CancelableRequest<T>,
  failed: (error: unknown, tooLarge: boolean) => Error,
): Promise<T> {
  let tooLarge = false;
  sent.on('downloadProgress', ({ transferred }: { transferred: number }) => {
    if (tooLarge || transferred <= ANSWER_MAX_BYTES) return;
    tooLarge = true;
    sent.cancel();
  });
  try {
    return await sent;
  } catch (error) {
    throw failed(error, tooLarge);
  }
}
