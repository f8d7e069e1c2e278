import type { UseCase } from '../../config/task-schema.js';
import { nxqlString } from '../../nxql/literal.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { STATUS, STATUS_FACET } from '../../status/facet.js';
import { missingValues, READINESS_KEYS } from '../../status/readiness.js';
import { afterLabelling } from '../../status/transitions.js';
import { joinUserInput, userInputFor } from '../../status/user-input.js';
import { HTTP_CONTENT_FACET, useCaseOf, type MappingEntry } from './mapping-schema.js';
import { tooLongFor, tooLongText, type FieldLimit } from '../../config/field-limits.js';
import { referenceOf, resolveValue } from './substitute.js';
import { typedValue } from './value-type.js';

export interface DocumentPlan {
  doc: RepositoryDocument;
  entry: MappingEntry;
  useCase: UseCase;
  /** Facets for the document, the status facet last. */
  facets: string[];
  /** The mapping's values, resolved against the document (also written on the folder). */
  values: Record<string, unknown>;
  /** Status properties, written on the document only. */
  status: Record<string, unknown>;
  folder?: { name: string; title: string };
  /** What the use case still needs from a user. */
  missing: string[];
  /** `$` references with no value on this document: nothing is written. */
  unresolved: string[];
  /** `$` values that cannot be written as they are: too long for their SAP field, or not of their property's type. Nothing is written. */
  unfit: string[];
}

/** Files under the entry's path that are not labelled yet, minus deeper mapped paths (the deepest path wins). */
export function intakeQuery(entry: MappingEntry, allPaths: string[]): string {
  const deeper = allPaths
    .filter((p) => p.startsWith(`${entry.path}/`))
    .map((p) => ` AND NOT ecm:path STARTSWITH ${nxqlString(p)}`);
  return (
    `SELECT * FROM File WHERE ecm:path STARTSWITH ${nxqlString(entry.path)}${deeper.join('')}` +
    ' AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0' +
    // docId is written last-but-atomically with the other values, so a document whose run
    // died after AddFacet and before its properties were written is found again.
    ` AND (ecm:mixinType <> ${nxqlString(HTTP_CONTENT_FACET)} OR erpHttpContent:docId IS NULL)`
  );
}

/**
 * The condition of `intakeQuery`, asked of a document as it is now: a search answered from an
 * index that lags writes may return a file another run has labelled since (the document comes
 * back current). Labelling it again would put a finished document back to READY.
 */
export function stillNew(entry: MappingEntry, allPaths: string[], doc: RepositoryDocument): boolean {
  const under = (path: string): boolean => doc.path.startsWith(`${path}/`);
  if (!under(entry.path) || allPaths.some((p) => p.startsWith(`${entry.path}/`) && under(p))) return false;
  const docId = doc.properties['erpHttpContent:docId'];
  return !doc.facets.includes(HTTP_CONTENT_FACET) || docId === undefined || docId === null || docId === '';
}

/** The properties the intake reads from a new file for `entry`: readiness, the entry's `$` references and the file's claim. */
export function intakeReads(entry: MappingEntry): string[] {
  const references = Object.values(entry.properties)
    .map(referenceOf)
    .filter((reference) => reference !== undefined);
  return [...READINESS_KEYS[useCaseOf(entry)], ...references, STATUS.claimedBy];
}

/** Who may change what on the ERP tab, as the status facet keeps it. */
const userInput = (entry: MappingEntry, useCase: UseCase): string =>
  joinUserInput(userInputFor(useCase, entry.properties, entry.userInput));

/** The archive-link folder is named after the file, without its extension. */
function folderName(doc: RepositoryDocument): string {
  const name = doc.path.slice(doc.path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/**
 * A value a `$` reference found, as its property takes it (value-type.ts) and not too long for the
 * SAP field it goes to (a task's transform that shortens it is the task's to check).
 */
function typed(
  key: string,
  found: unknown,
  limits: Map<string, FieldLimit[]>,
  useCase: UseCase,
): { value: unknown } | { problem: string } {
  const result = typedValue(key, found);
  if (!('value' in result) || typeof result.value !== 'string') return result;
  const limit = tooLongFor(limits, key, useCase, result.value);
  return limit === undefined ? result : { problem: tooLongText(result.value, limit) };
}

export function planDocument(
  entry: MappingEntry,
  doc: RepositoryDocument,
  limits: Map<string, FieldLimit[]>,
): DocumentPlan {
  const values: Record<string, unknown> = {};
  const unresolved: string[] = [];
  const unfitValues: string[] = [];
  const useCase = useCaseOf(entry);
  for (const [key, raw] of Object.entries(entry.properties)) {
    const resolved = resolveValue(raw, doc);
    if (!resolved.ok) unresolved.push(`${key} = ${resolved.reference}`);
    else if (resolved.value !== raw) {
      const found = typed(key, resolved.value, limits, useCase);
      if ('value' in found) values[key] = found.value;
      else unfitValues.push(`${key} = ${String(raw)}: ${found.problem}`);
    } else values[key] = resolved.value;
  }
  const missing = missingValues(useCase, doc.properties, values);
  return {
    doc,
    entry,
    useCase,
    values,
    unresolved,
    unfit: unfitValues,
    missing,
    facets: [...entry.facets, STATUS_FACET],
    // The intake claim a folder needs (apply.ts) ends with the labelling.
    status: { ...afterLabelling(missing), [STATUS.userInput]: userInput(entry, useCase) },
    folder: entry.createParentALFolder ? { name: folderName(doc), title: doc.title } : undefined,
  };
}
