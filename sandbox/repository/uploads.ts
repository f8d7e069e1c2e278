import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendEmpty, sendJson } from '../http.js';
import { RepositoryError, type BlobResolver, type Store } from './store.js';

interface UploadedFile {
  name: string;
  mimeType: string;
  chunks: Buffer[];
  chunkCount: number;
}

/** Batch upload (`/api/v1/upload`): files wait in memory until a document references them. */
export class Batches {
  private readonly batches = new Map<string, Map<string, UploadedFile>>();

  /** A resolver for one request; batches it used are dropped afterwards unless asked not to. */
  resolver(store: Store, used: Set<string>): BlobResolver {
    return (reference) => {
      const batchId = reference['upload-batch'];
      const fileId = reference['upload-fileId'];
      // upload-fileId is read as a JSON string; a number finds nothing.
      if (typeof batchId !== 'string' || typeof fileId !== 'string') return undefined;
      const file = this.batches.get(batchId)?.get(fileId);
      if (file === undefined || file.chunks.filter(Boolean).length < file.chunkCount) return undefined;
      used.add(batchId);
      return store.storeBlob(Buffer.concat(file.chunks), file.name, file.mimeType);
    };
  }

  drop(batchIds: Iterable<string>): void {
    for (const id of batchIds) this.batches.delete(id);
  }

  async handle(req: IncomingMessage, res: ServerResponse, parts: string[]): Promise<void> {
    const [batchId, index, extra] = parts;
    // Blob operations on a batch (`…/execute/{op}`) are not part of the sandbox.
    if (extra !== undefined) throw new RepositoryError(404, `No operation with id ${parts.slice(3).join('/')}`);
    if (batchId === undefined || batchId === 'new') {
      if (req.method !== 'POST') throw new RepositoryError(405, 'Method not allowed');
      const id = `batchId-${randomUUID()}`;
      this.batches.set(id, new Map());
      return sendJson(res, 201, { batchId: id });
    }
    const batch = this.batches.get(batchId);
    if (batch === undefined) return sendEmpty(res, 404);
    if (index === undefined) {
      if (req.method === 'DELETE') {
        this.batches.delete(batchId);
        return sendEmpty(res, 204);
      }
      if (batch.size === 0) return sendEmpty(res, 204);
      return sendJson(res, 200, [...batch.values()].map(describe));
    }
    if (index === 'info') {
      return sendJson(res, 200, { batchId, provider: 'default', fileEntries: [...batch.values()].map(describe) });
    }
    if (!/^\d+$/.test(index)) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      return void res.end(`Invalid file index: ${index}`);
    }
    if (req.method === 'POST') return this.upload(req, res, batchId, batch, index);
    const file = batch.get(index);
    if (file === undefined) return sendEmpty(res, 404);
    if (req.method === 'DELETE') {
      batch.delete(index);
      return sendEmpty(res, 204);
    }
    if (file.chunks.filter(Boolean).length < file.chunkCount) return sendJson(res, 202, describe(file));
    return sendJson(res, 200, describe(file));
  }

  private async upload(
    req: IncomingMessage,
    res: ServerResponse,
    batchId: string,
    batch: Map<string, UploadedFile>,
    index: string,
  ): Promise<void> {
    if (String(req.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      throw new RepositoryError(400, 'multipart/form-data is not supported for batch upload');
    }
    const content = await readBody(req);
    const header = (name: string): string | undefined => req.headers[name] as string | undefined;
    const name = decodeURIComponent(header('x-file-name') ?? 'file');
    const mimeType = header('x-file-type') ?? 'application/octet-stream';
    const uploadedSize = String(content.length);
    if (header('x-upload-type') !== 'chunked') {
      batch.set(index, { name, mimeType, chunks: [content], chunkCount: 1 });
      return sendJson(res, 201, { uploaded: 'true', batchId, fileIdx: index, uploadType: 'normal', uploadedSize });
    }
    const chunkCount = Number(header('x-upload-chunk-count'));
    const chunkIndex = Number(header('x-upload-chunk-index'));
    const file = batch.get(index) ?? { name, mimeType, chunks: [], chunkCount };
    file.chunks[chunkIndex] = content;
    batch.set(index, file);
    // A sparse array: its keys are the indexes of the chunks received so far.
    const received = Object.keys(file.chunks);
    const complete = received.length === chunkCount;
    return sendJson(res, complete ? 201 : 202, {
      uploaded: String(complete),
      batchId,
      fileIdx: index,
      uploadType: 'chunked',
      uploadedSize,
      uploadedChunkIds: received,
      chunkCount: String(chunkCount),
    });
  }
}

function describe(file: UploadedFile): Record<string, unknown> {
  const size = file.chunks.reduce((sum, c) => sum + c.length, 0);
  return { name: file.name, size, uploadType: file.chunkCount > 1 ? 'chunked' : 'normal' };
}
