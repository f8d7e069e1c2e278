/**
 * A JAR manifest (the JAR File Specification, "Manifest Specification"): `Name: value` lines of at
 * most 72 bytes in UTF-8, longer values continued on lines starting with one space, and a newline
 * after the last line, which a reader otherwise drops.
 */
export function jarManifest(headers: ReadonlyArray<[string, string]>): string {
  return headers.map(([name, value]) => wrap(`${name}: ${value}`)).join('');
}

const MAX_BYTES = 72;

function wrap(line: string): string {
  const lines: string[] = [];
  let current = '';
  let limit = MAX_BYTES;
  for (const char of line) {
    if (Buffer.byteLength(current + char) > limit) {
      lines.push(current);
      current = '';
      // A continuation line's leading space counts against its 72 bytes.
      limit = MAX_BYTES - 1;
    }
    current += char;
  }
  lines.push(current);
  return lines.map((part, i) => `${i === 0 ? '' : ' '}${part}\r\n`).join('');
}
