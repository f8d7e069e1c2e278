/** How much of a value a message quotes: enough to recognise it, never the whole of a large one. */
const QUOTED_MAX = 80;

/**
 * A value as a message quotes it: cut after QUOTED_MAX characters with its full length named, so
 * that a status message, a report line or a log line stays readable and small however large the
 * value it is about.
 */
export function shortened(value: string): string {
  if (value.length <= QUOTED_MAX) return value;
  return `${value.slice(0, QUOTED_MAX)}… (${value.length} characters)`;
}
