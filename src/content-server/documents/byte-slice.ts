import { Readable } from 'node:stream';
import type { ByteRange } from '../../repository/client.js';

/**
 * The bytes `from` to `to` of a whole stream, passed through as they come. For a repository that
 * answered a range request with the whole blob (Nuxeo does, with 200, for a range it does not
 * take, and a blob store behind it may too): the rest is never buffered, and the download stops
 * once the range is complete (leaving the loop destroys it, its abort handled by the iterator).
 */
export function cutRange(whole: Readable, range: ByteRange): Readable {
  return Readable.from(
    (async function* () {
      let position = 0;
      for await (const chunk of whole) {
        const start = position;
        position += (chunk as Buffer).length;
        yield (chunk as Buffer).subarray(Math.max(0, range.from - start), Math.max(0, range.to + 1 - start));
        if (position > range.to) break;
      }
    })(),
    { objectMode: false },
  );
}
