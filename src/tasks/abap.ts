import { DocumentError } from '../errors.js';

/**
 * Document values turned into ABAP field values, checked before the call: SAP truncates or
 * dumps on a value that is too long, so a bad value must be a clear error on the document.
 */
export class AbapValues {
  constructor(private readonly properties: Record<string, unknown>, private readonly path: string) {}

  /** A CHAR field of at most `length` characters; absent values are blank. */
  char(key: string, field: string, length: number): string {
    const value = this.properties[key];
    const text = value === undefined || value === null ? '' : String(value);
    if (text.length > length) {
      throw new DocumentError(`${key} = "${text}" is longer than the ${length} characters of SAP field ${field}`, { target: this.path });
    }
    return text;
  }

  /** A DATS field: `YYYYMMDD` from an ISO date or timestamp; blank when absent. */
  date(key: string, field: string): string {
    const text = this.char(key, field, 64);
    if (text === '') return '';
    const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
    if (match === null) throw new DocumentError(`${key} = "${text}" is not a date for SAP field ${field}`, { target: this.path });
    return `${match[1]}${match[2]}${match[3]}`;
  }

  /** An ABAP flag: `X` for true, blank otherwise. */
  flag(key: string): string {
    return this.properties[key] === true ? 'X' : '';
  }
}
