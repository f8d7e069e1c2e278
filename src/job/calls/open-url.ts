import type { ErpSystemConfig } from '../../config/erp-schema.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { fill, mapValues } from './values.js';

/** The property a link's business object type is read from, and what picks a system's `openInSap` template. */
export const OBJECT_TYPE = 'erpCreateALDocument:erpObject';

/**
 * "Open in SAP" for a linked document: its system's template for the document's object type,
 * filled with the document's values, each percent-encoded (values.ts, `{u:…}`); undefined when the
 * system has none for that type. A value that does not fit the template (too long, not in a map)
 * is the document's problem: the caller keeps the link and says so.
 */
export function openUrl(system: ErpSystemConfig, doc: RepositoryDocument): string | undefined {
  const template = system.openInSap?.[String(doc.properties[OBJECT_TYPE] ?? '')];
  if (template === undefined) return undefined;
  return fill(template.url, mapValues(template.values, doc));
}

/** The properties the systems' templates read from a document: what a task's search must ask back. */
export const openUrlReads = (systems: readonly ErpSystemConfig[]): string[] =>
  systems.flatMap((system) =>
    system.openInSap === undefined
      ? []
      : [
          OBJECT_TYPE,
          ...Object.values(system.openInSap).flatMap((template) =>
            Object.values(template.values).flatMap((spec) => (spec.property === undefined ? [] : [spec.property])),
          ),
        ],
  );
