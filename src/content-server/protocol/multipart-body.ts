import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import { make, type MultipartError } from 'multipasta';
import { ArchiveLinkError, STATUS } from './protocol.js';

/** One part of a multipart body: its headers (lower-case names) and its bytes, streamed. */
export interface IncomingPart {
  headers: Record<string, string | string[]>;
  /** The Content-Disposition name, or empty. */
  name: string;
  body: PassThrough;
}

/** More parts than any create, mCreate or update sends: each one costs a few objects until the answer. */
export const MAX_PARTS = 10_000;

const ignore = (): void => undefined;

const UNFINISHED = 'the body ends before its closing boundary';

function describe(error: MultipartError, maxPartBytes: number): string {
  switch (error._tag) {
    case 'ReachedLimit':
      return error.limit === 'MaxParts'
        ? `more than ${MAX_PARTS} parts`
        : `a part is larger than maxPartBytes (${maxPartBytes} bytes)`;
    case 'BadHeaders':
      return `a part's headers are malformed (${error.error.reason})`;
    case 'InvalidBoundary':
      return 'the Content-Type names no boundary';
    case 'InvalidDisposition':
      return 'a part is form-data without a name';
    default:
      return UNFINISHED;
  }
}

/** A part not read by its consumer is read off, so that the next one can come. */
async function readOff(body: PassThrough): Promise<void> {
  if (body.destroyed || body.readableEnded) return;
  body.resume();
  await finished(body).catch(ignore);
}

/**
 * A multipart body (create POST, mCreate, update POST) read part by part as SAP sends it: a part's
 * bytes flow to whoever reads its `body` (the upload to the repository) and the request is paused
 * while that reader is behind, so memory holds a few chunks whatever the size of a component.
 * Each part is read to its end before the next one is handed out. The parsing itself (boundaries,
 * part headers) is multipasta's; SAP's part headers (X-docId, X-compId) are kept as sent.
 *
 * Reading starts with the first part asked for: a request refused before that is left to the
 * server, which does not read the rest.
 */
export class MultipartBody implements AsyncIterable<IncomingPart> {
  /** Why the body could not be read (malformed, a part too large, cut off): the request's failure, whatever an upload made of it. */
  failure: ArchiveLinkError | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly maxPartBytes: number,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<IncomingPart> {
    const { req, maxPartBytes } = this;
    if (!/^multipart\//i.test(req.headers['content-type'] ?? ''))
      throw new ArchiveLinkError(STATUS.badRequest, 'a POST carries its components as multipart/form-data');
    const waiting: IncomingPart[] = [];
    let writing: PassThrough | undefined;
    let done = false;
    let wake = ignore;
    const fail = (reason: string): void => {
      this.failure ??= new ArchiveLinkError(STATUS.badRequest, `multipart body: ${reason}`);
      writing?.destroy(this.failure);
      wake();
    };
    const parser = make({
      headers: req.headers as Record<string, string>,
      // Every part is streamed, whatever its headers: none is read whole.
      isFile: () => true,
      onField: ignore,
      maxParts: MAX_PARTS,
      maxPartSize: maxPartBytes,
      onFile: (info) => {
        const body = new PassThrough();
        // Its failure is the request's (this.failure); whoever reads it sees it too.
        body.on('error', ignore);
        writing = body;
        waiting.push({ headers: info.headers, name: info.name, body });
        wake();
        return (chunk) => {
          if (body.destroyed) return;
          if (chunk === null) return void body.end();
          if (body.write(chunk)) return;
          // Its reader is behind: SAP waits (TCP) until it has caught up, or let it go.
          req.pause();
          const go = (): void => {
            body.off('drain', go).off('close', go);
            req.resume();
          };
          body.once('drain', go).once('close', go);
        };
      },
      onError: (error) => fail(describe(error, maxPartBytes)),
      onDone: () => {
        done = true;
        wake();
      },
    });
    const onData = (chunk: Buffer): void => {
      if (this.failure === undefined) parser.write(chunk);
    };
    const onEnd = (): void => {
      parser.end();
      if (!done) fail(UNFINISHED);
    };
    const onClose = (): void => {
      if (!req.complete) fail('the client stopped sending it');
    };
    req.on('data', onData).on('end', onEnd).on('close', onClose).on('error', ignore);
    try {
      for (;;) {
        if (this.failure !== undefined) throw this.failure;
        const part = waiting.shift();
        if (part !== undefined) {
          yield part;
          await readOff(part.body);
          continue;
        }
        if (done) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      for (const part of waiting) part.body.destroy();
      writing?.destroy();
    }
  }
}
