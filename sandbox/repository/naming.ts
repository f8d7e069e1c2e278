import { randomUUID } from 'node:crypto';

/** Nuxeo's default `nuxeo.path.segment.maxsize`. */
const MAX_SEGMENT = 24;

/**
 * PathSegmentService: trim, replace slashes, cut to 24 characters; a name made only
 * of spaces and punctuation becomes a random id.
 */
export function pathSegment(name: string): string {
  const cleaned = name.trim().replace(/[/\\]/g, '-').slice(0, MAX_SEGMENT).trim();
  return /^[\s\p{P}]*$/u.test(cleaned) ? randomUUID().replace(/-/g, '').slice(0, MAX_SEGMENT) : cleaned;
}

/** DuplicatedNameFixer: a clash appends `.<currentTimeMillis>` (no 409). */
export function uniqueName(name: string, taken: (candidate: string) => boolean): string {
  if (!taken(name)) return name;
  let millis = Date.now();
  while (taken(`${name}.${millis}`)) millis++;
  return `${name}.${millis}`;
}
