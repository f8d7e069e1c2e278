import type { UseCase } from '../config/task-schema.js';

export const USE_CASE_FACETS: Record<UseCase, string> = {
  link: 'fct_erp_create_al_document',
  barcode: 'fct_erp_barcode',
  workflow: 'fct_erp_start_workflow',
};

export const ORG_OBJECT_TYPES = ['US', 'C', 'O', 'P', 'S', 'A'];

const isSet = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

/**
 * What a document still needs before its use case can run (product.md, "Decisions").
 * An empty list means READY. Re-evaluated on every run, so a user filling a value moves it on.
 * `written` are values about to be written over `properties` (looked up, not merged: a
 * document's property bag is large, and the intake asks this of every new document).
 */
export function missingValues(useCase: UseCase, properties: Record<string, unknown>, written: Record<string, unknown> = {}): string[] {
  const value = (key: string): unknown => (key in written ? written[key] : properties[key]);
  const missing = (keys: string[]): string[] => keys.filter((key) => !isSet(value(key)));
  const base = ['erpHttpContent:archiveId', 'erpHttpContent:docId'];
  switch (useCase) {
    case 'link':
      return missing([...base, 'erpCreateALDocument:erpObject', 'erpCreateALDocument:erpObjectId', 'erpCreateALDocument:erpArchiveObject']);
    case 'barcode':
      return missing([...base, 'erpBarcode:barcode', 'erpBarcode:docTyp']);
    case 'workflow': {
      const start = value('erpStartWorkflow:erpStartWorkflow') === true ? [] : ['erpStartWorkflow:erpStartWorkflow'];
      const otyp = value('erpStartWorkflow:erpOTyp');
      const agent = isSet(otyp) && !ORG_OBJECT_TYPES.includes(String(otyp)) ? ['erpStartWorkflow:erpOTyp'] : [];
      const source = isSet(value('erpStartWorkflow:erpBarcode'))
        ? []
        : missing([...base, 'erpStartWorkflow:erpDocumentTyp', 'erpStartWorkflow:erpArchiveObject']);
      return [...start, ...agent, ...source];
    }
  }
}
