/**
 * Quote a value for NXQL. NXQL escapes the delimiter and the backslash with a backslash;
 * doubling the quote (SQL style) ends the string instead, so it must never be used.
 */
export function nxqlString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
}

/** A list for `IN (…)`. */
export function nxqlList(values: readonly string[]): string {
  return `(${values.map(nxqlString).join(', ')})`;
}
