import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, realpathSync, renameSync, rmSync, writeSync } from 'node:fs';
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
 * Writes a file whole or not at all: into a temporary file beside it, flushed to the disk and
 * renamed over it once complete. A disk that fills, or a crash, while it is written leaves the last
 * good file as it was. A symbolic link is followed (the file it names is replaced, not the link);
 * the temporary name is the process's own, unlike its pid, which is 1 in every container.
 */
export function replaceFile(path: string, write: (fd: number) => void): void {
  const target = existsSync(path) ? realpathSync(path) : path;
  const temporary = join(dirname(target), `.${basename(target)}.${randomUUID()}.tmp`);
  try {
    const fd = openSync(temporary, 'w');
    try {
      write(fd);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, target);
  } finally {
    rmSync(temporary, { force: true });
  }
}
