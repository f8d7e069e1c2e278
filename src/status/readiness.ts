import type { UseCase } from '../config/task-schema.js';

export const USE_CASE_FACETS: Record<UseCase, string> = {
  link: 'fct_erp_create_al_document',
  barcode: 'fct_erp_barcode',
  workflow: 'fct_erp_start_workflow',
};

export const ORG_OBJECT_TYPES = ['US', 'C', 'O', 'P', 'S', 'A'];

/** A value the readiness rules count as given. */
export const isSet = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

const BASE = ['erpHttpContent:archiveId', 'erpHttpContent:docId'];
const LINK = [
  ...BASE,
  'erpCreateALDocument:erpObject',
  'erpCreateALDocument:erpObjectId',
  'erpCreateALDocument:erpArchiveObject',
];
const BARCODE = [...BASE, 'erpBarcode:barcode', 'erpBarcode:docTyp'];
export const WORKFLOW_START = 'erpStartWorkflow:erpStartWorkflow';
const WORKFLOW_AGENT = 'erpStartWorkflow:erpOTyp';
const WORKFLOW_BARCODE = 'erpStartWorkflow:erpBarcode';
const WORKFLOW_SOURCE = [...BASE, 'erpStartWorkflow:erpDocumentTyp', 'erpStartWorkflow:erpArchiveObject'];

/** Every property the readiness check of a use case may read: what a search must ask back for it. */
export const READINESS_KEYS: Record<UseCase, string[]> = {
  link: LINK,
  barcode: BARCODE,
  workflow: [WORKFLOW_START, WORKFLOW_AGENT, WORKFLOW_BARCODE, ...WORKFLOW_SOURCE],
};

/**
 * What a document still needs before its use case can run (product.md, "Decisions").
 * An empty list means READY. Re-evaluated on every run, so a user filling a value moves it on.
 * `written` are values about to be written over `properties` (looked up, not merged: a
 * document's property bag is large, and the intake asks this of every new document).
 */
export function missingValues(
  useCase: UseCase,
  properties: Record<string, unknown>,
  written: Record<string, unknown> = {},
): string[] {
  const value = (key: string): unknown => (key in written ? written[key] : properties[key]);
  const missing = (keys: string[]): string[] => keys.filter((key) => !isSet(value(key)));
  switch (useCase) {
    case 'link':
      return missing(LINK);
    case 'barcode':
      return missing(BARCODE);
    case 'workflow': {
      const start = value(WORKFLOW_START) === true ? [] : [WORKFLOW_START];
      const otyp = value(WORKFLOW_AGENT);
      const agent = isSet(otyp) && !ORG_OBJECT_TYPES.includes(String(otyp)) ? [WORKFLOW_AGENT] : [];
      const source = isSet(value(WORKFLOW_BARCODE)) ? [] : missing(WORKFLOW_SOURCE);
      return [...start, ...agent, ...source];
    }
  }
}
