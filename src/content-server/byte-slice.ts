import { Transform, type Readable } from 'node:stream';
import type { ByteRange } from '../repository/client.js';

/**
 * The bytes `from` to `to` of a whole stream, passed through as they come. For a repository that
 * answered a range request with the whole blob (Nuxeo does, with 200, for a range it does not
 * take, and a blob store behind it may too): the rest is never buffered.
 */
export function cutRange(whole: Readable, range: ByteRange): Readable {
  let position = 0;
  let finished = false;
  const end = range.to + 1;
  const cut = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const start = position;
      position += chunk.length;
      const piece = chunk.subarray(Math.max(0, range.from - start), Math.max(0, Math.min(chunk.length, end - start)));
      if (piece.length > 0) this.push(piece);
      if (position >= end && !finished) {
        finished = true;
        this.push(null);
        whole.unpipe(cut);
        whole.destroy();
      }
      done();
    },
  });
  // The abort of the rest, once the range is complete, is no error of the range's.
  whole.on('error', (error) => {
    if (!finished) cut.destroy(error);
  });
  return whole.pipe(cut);
}
