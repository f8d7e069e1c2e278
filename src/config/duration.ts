import ms from 'ms';

export const DURATION_HINT = 'a duration such as 90s, 25m or 1h';

/**
 * A duration option such as `90s`, `25m` or `1h`, in milliseconds; undefined when it is not
 * one. A bare number is refused: `ms` would read it as milliseconds, which is never what
 * `--max-duration 1500` means.
 */
export function parseDuration(text: string): number | undefined {
  const value = /^\s*\d+(\.\d+)?\s*[a-z]+\s*$/i.test(text) ? ms(text as ms.StringValue) : undefined;
  return value !== undefined && value > 0 ? value : undefined;
}
