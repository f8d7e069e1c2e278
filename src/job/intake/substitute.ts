import { propertyValue, type RepositoryDocument } from '../../repository/document.js';

type Resolved = { ok: true; value: unknown } | { ok: false; reference: string };

/** The property a `$` value refers to (with its path into a complex value), or undefined for a literal, `$$…` or `$id`. */
export function referenceOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.startsWith('$') || value.startsWith('$$') || value === '$id')
    return undefined;
  return value.slice(1);
}

/**
 * `$` values (spec §2.2): `$id` is the UUID, `$<prefix:field>` a property of the uploaded
 * document, with `.` or `/` into complex values (`$file:content.name`). `$$` writes a
 * literal `$`. A reference to a missing value is reported, never replaced by a blank.
 */
export function resolveValue(value: unknown, doc: RepositoryDocument): Resolved {
  if (typeof value !== 'string' || !value.startsWith('$')) return { ok: true, value };
  if (value.startsWith('$$')) return { ok: true, value: value.slice(1) };
  // Read as the intake's search reads it for its schemas (intakeReads); what names no property now is `$id`.
  const reference = referenceOf(value);
  const found = reference === undefined ? doc.uid : propertyValue(doc, reference);
  if (found === undefined || found === null || found === '') return { ok: false, reference: value };
  return { ok: true, value: found };
}
