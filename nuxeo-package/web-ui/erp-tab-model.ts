import type { UseCase } from '../../src/config/task-schema.js';
import { STATUS } from '../../src/status/facet.js';
import {
  HTTP_CONTENT_FACET,
  HTTP_CONTENT_PROPERTIES,
  missingValues,
  ORG_OBJECT_TYPES,
  USE_CASE_FACETS,
} from '../../src/status/readiness.js';

export { HTTP_CONTENT_FACET, HTTP_CONTENT_PROPERTIES };

/**
 * What the ERP tab shows and lets a user change, worked out from a document alone: no element, no
 * request, so that the rules are the job's own (src/status/) and are tested without a browser.
 */

export type Properties = Readonly<Record<string, unknown>>;

export interface Field {
  key: string;
  kind: 'text' | 'switch' | 'choice';
  /** For a choice: its values. */
  options?: readonly string[];
}

const text = (key: string): Field => ({ key, kind: 'text' });
const toggle = (key: string): Field => ({ key, kind: 'switch' });

/** The values of each use case a user may fill in, in the order the tab shows them; the object id first (§2.3). */
export const USE_CASE_FIELDS: Record<UseCase, readonly Field[]> = {
  link: [
    'erpObjectId',
    'erpObject',
    'erpArchiveObject',
    'erpDocumentTyp',
    'erpDescription',
    'erpFilename',
    'erpCreator',
    'erpClient',
    'erpArchiveDate',
  ].map((name) => text(`erpCreateALDocument:${name}`)),
  barcode: [text('erpBarcode:barcode'), text('erpBarcode:docTyp')],
  workflow: [
    toggle('erpStartWorkflow:erpStartWorkflow'),
    { key: 'erpStartWorkflow:erpOTyp', kind: 'choice', options: ORG_OBJECT_TYPES },
    text('erpStartWorkflow:erpObjId'),
    text('erpStartWorkflow:erpBarcode'),
    text('erpStartWorkflow:erpDocumentTyp'),
    text('erpStartWorkflow:erpArchiveObject'),
    toggle('erpStartWorkflow:erpLateArchiving'),
  ],
};

/** The use cases a document carries the facet of, in the order the job's tasks know them. */
export function useCasesOf(facets: readonly string[]): UseCase[] {
  return (Object.keys(USE_CASE_FACETS) as UseCase[]).filter((useCase) => facets.includes(USE_CASE_FACETS[useCase]));
}

/**
 * Whether a user may still change the use-case values: while the document waits (no status yet,
 * PENDING_INPUT, READY, RETRY or FAILED). IN_PROGRESS is a call to SAP under way, DONE is linked.
 */
export function isEditable(properties: Properties): boolean {
  const status = properties[STATUS.status];
  return status !== 'IN_PROGRESS' && status !== 'DONE';
}

/** The values the job still waits for, by its own readiness rules, over every use case the document carries. */
export function missingKeys(facets: readonly string[], properties: Properties): string[] {
  return [...new Set(useCasesOf(facets).flatMap((useCase) => missingValues(useCase, properties)))];
}

const empty = (value: unknown): boolean => value === undefined || value === null || value === '';

/**
 * The properties a save sends: those the user changed, as Web UI's own edit form does; a value
 * emptied is sent as null, which the job's readiness rules read as missing.
 */
export function changedValues(original: Properties, edited: Properties): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(edited)
      .filter(([key, value]) => value !== original[key] && !(empty(value) && empty(original[key])))
      .map(([key, value]) => [key, empty(value) ? null : value]),
  );
}

/** The i18n key of a property's label: `erp.property.<schema prefix>.<name>`. */
export const labelKey = (key: string): string => `erp.property.${key.replace(':', '.')}`;
