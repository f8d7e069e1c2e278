import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes all of `data`: a write into a filling disk may write part of it without an error, and
 * the next one says why (ENOSPC, EFBIG).
 */
export function writeAll(fd: number, data: string | Buffer): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  // A regular file's write writes at least one byte or fails (POSIX write()).
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
}

/**
 * Writes a file whole or not at all: into a temporary file beside it, renamed over it once
 * complete. A disk that fills, or a crash, while it is written leaves the last good file as it was.
 */
export function replaceFile(path: string, write: (fd: number) => void): void {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    const fd = openSync(temporary, 'w');
    try {
      write(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}
