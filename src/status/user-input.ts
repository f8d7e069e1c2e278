import type { UseCase } from '../config/task-schema.js';
import { missingValues } from './readiness.js';

/**
 * Which use-case values end users may change on the ERP tab. The mapping entry declares them
 * (`userInput`); the intake writes the list onto the document (`erpTaskStatus:userInput`, its
 * property names joined by commas), where the tab reads it: the tab cannot read the mapping file,
 * which only administrators may (spec §5.2).
 */

/**
 * The values a person gives per document when the entry does not say: what names the business
 * object or the bar code, and a workflow's start and agent. Everything else (the SAP client, the
 * object type, the archive object) is the administrator's, set in the mapping.
 */
const DEFAULT_USER_INPUT: Record<UseCase, readonly string[]> = {
  link: ['erpCreateALDocument:erpObjectId'],
  barcode: ['erpBarcode:barcode'],
  workflow: [
    'erpStartWorkflow:erpStartWorkflow',
    'erpStartWorkflow:erpOTyp',
    'erpStartWorkflow:erpObjId',
    'erpStartWorkflow:erpBarcode',
  ],
};

/**
 * What users of an entry's documents may change: the entry's list, or the defaults and every value
 * the job needs that the entry leaves unset (else a document would wait for what no one may enter).
 * `given` are the entry's values, a `$` reference counted as given.
 */
export function userInputFor(useCase: UseCase, given: Record<string, unknown>, declared?: readonly string[]): string[] {
  if (declared !== undefined) return [...declared];
  return [...new Set([...DEFAULT_USER_INPUT[useCase], ...missingValues(useCase, given)])];
}

/** The list as the status facet keeps it. */
export const joinUserInput = (keys: readonly string[]): string => keys.join(',');

/** The list a document carries, or undefined when it was labelled before the list was written. */
export function userInputOf(value: unknown): string[] | undefined {
  if (typeof value !== 'string') return undefined;
  return value === '' ? [] : value.split(',');
}
