import { featureRegistry, type FieldDef } from '../../../common/nuxeo/schemas.js';

/**
 * A value a `$` reference found, as its property takes it: text for text, a number for a number, true
 * or false for a boolean, a date as its text; or why it cannot be written as it is. Nuxeo's REST
 * reader refuses some mismatches (DocumentPropertiesJsonReader, 400), while Automation's text
 * reading stores a number that does not parse as 0 and any text but "true" as false
 * (DocumentHelper.setProperty): a file's folder gets its values through Automation, so a mismatch is
 * caught here, before anything is written. And the value sent is the value the server answers
 * with, so the check that each value stuck (client.ts) compares like with like.
 */
export function typedValue(key: string, value: unknown): { value: unknown } | { problem: string } {
  // A mapping's keys are the feature's scalar properties, of these five types (its schema checks them when the file is read).
  const type = (featureRegistry().property(key) as { field: FieldDef }).field.type;
  const typed = TYPES[type](value);
  return typed === UNFIT ? { problem: `${JSON.stringify(value)} is not ${KINDS[type]}` } : { value: typed };
}

const UNFIT = Symbol('unfit');
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
// Nuxeo's W3C form, which is what it answers its own dates in.
const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const KINDS: Record<string, string> = {
  string: 'text',
  boolean: 'true or false',
  long: 'a whole number',
  double: 'a number',
  date: 'a date (YYYY-MM-DD, or with a time)',
};

/** Each scalar type's reading of a value, UNFIT when it has none. */
const TYPES: Record<string, (value: unknown) => unknown> = {
  string: (value) => (typeof value === 'object' ? UNFIT : String(value)),
  boolean: (value) =>
    typeof value === 'boolean' ? value : /^(true|false)$/i.test(text(value)) ? /^true$/i.test(text(value)) : UNFIT,
  long: (value) => (Number.isInteger(value) ? value : /^[+-]?\d+$/.test(text(value)) ? Number(value) : UNFIT),
  double: (value) => (typeof value === 'number' ? value : NUMBER.test(text(value)) ? Number(value) : UNFIT),
  date: (value) => (DATE.test(text(value)) && !Number.isNaN(Date.parse(text(value))) ? value : UNFIT),
};
