import ms from 'ms';
import type { z } from 'zod';

/**
 * What a user most likely meant where their YAML trips, added to the problem's message: a key
 * misspelt, a number or a yes where text is needed, a unit on a millisecond field, a cron
 * expression that YAML read as an alias.
 */

/** The parts of a zod 4 schema's definition that lead to the keys an object takes. */
interface Def {
  shape?: Record<PropertyKey, Walkable>;
  innerType?: Walkable;
  element?: Walkable;
  valueType?: Walkable;
  options?: Walkable[];
}
interface Walkable {
  def: Def;
}

/**
 * The schemas a value at `path` is checked by: optional and default wrappers unwrapped, every
 * option of a union, an array's element, a record's value. The path is one zod reported, so it
 * leads somewhere.
 */
function schemasAt(schema: Walkable, path: readonly PropertyKey[]): Walkable[] {
  const { def } = schema;
  if (def.innerType !== undefined) return schemasAt(def.innerType, path);
  if (def.options !== undefined) return def.options.flatMap((option) => schemasAt(option, path));
  if (path.length === 0) return [schema];
  const [head, ...rest] = path;
  // Object(undefined) is {}: a union's option without the key leads nowhere.
  const next = typeof head === 'number' ? def.element : (def.valueType ?? Object(def.shape)[head]);
  return [next].filter((found): found is Walkable => found !== undefined).flatMap((found) => schemasAt(found, rest));
}

function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  return schemasAt(schema as unknown as Walkable, path).flatMap(({ def }) => Object.keys(Object(def.shape)));
}

/** Edits (insert, delete, replace) from one word to the other, ignoring case. */
function distance(a: string, b: string): number {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  let row = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length];
}

/** The known key a misspelt one is closest to, when it is close: a third of its letters at most, one at least. */
function closest(key: string, known: string[]): string | undefined {
  const ranked = known.map((k) => ({ k, d: distance(key, k) })).sort((a, b) => a.d - b.d);
  const best = ranked[0];
  return best !== undefined && best.d <= Math.max(1, Math.floor(key.length / 3)) ? best.k : undefined;
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<PropertyKey, unknown> | undefined)?.[key], data);
}

/** A schema issue's message with what the user most likely meant, when there is a likely guess. */
export function hintedMessage(issue: z.core.$ZodIssue, schema: z.ZodType, data: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(schema, issue.path);
    return issue.keys
      .map((key) => {
        const guess = closest(key, known);
        return guess === undefined ? `unknown key "${key}"` : `unknown key "${key}" (did you mean ${guess}?)`;
      })
      .join('; ');
  }
  if (issue.code !== 'invalid_type') return issue.message;
  const value = valueAt(data, issue.path);
  if (issue.expected === 'string' && (typeof value === 'number' || typeof value === 'boolean'))
    // The value is not repeated: it may be a password, and YAML has already changed it (001 reads as 1).
    return `${issue.message} (YAML read the value as a ${typeof value}: quote it)`;
  const key = String(issue.path[issue.path.length - 1]);
  if (issue.expected !== 'number' || !key.endsWith('Ms') || typeof value !== 'string') return issue.message;
  const millis = ms(value as ms.StringValue) as number | undefined;
  return millis === undefined
    ? issue.message
    : `${issue.message} (${key} is a number of milliseconds, without a unit: ${millis})`;
}

/** A YAML error, with the likely cause when it is an alias: an unquoted value starting with `*`. */
export function yamlMessage(message: string): string {
  const first = message.split('\n')[0];
  return /alias/i.test(first)
    ? `${first} (a value starting with * is read as a YAML alias: quote it, as in schedule: '*/5 * * * *')`
    : first;
}
