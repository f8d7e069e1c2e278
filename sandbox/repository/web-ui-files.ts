import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { RepositoryError } from './store.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * `/nuxeo/ui/…`: the files of a Web UI folder, as Nuxeo serves nxserver/nuxeo.war/ui to a signed-in
 * user (the ERP tab is tested in a browser against this). A path that leaves the folder is 404.
 */
export async function sendWebUiFile(res: ServerResponse, folder: string, path: string): Promise<void> {
  const file = normalize(join(folder, decodeURIComponent(path) || 'index.html'));
  if (!file.startsWith(normalize(folder) + sep)) throw new RepositoryError(404, path);
  let body: Buffer;
  try {
    body = await readFile(file);
  } catch {
    throw new RepositoryError(404, path);
  }
  res.writeHead(200, {
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
    'Content-Length': body.length,
  });
  res.end(body);
}
