import type { UseCase } from '../../src/config/task-schema.js';
import { STATUS } from '../../src/status/facet.js';
import { HTTP_CONTENT_FACET } from '../../src/status/http-content.js';
import { isSet, missingValues, ORG_OBJECT_TYPES, USE_CASE_FACETS } from '../../src/status/readiness.js';
import { waitsForValues } from '../../src/status/transitions.js';
import { userInputFor, userInputOf } from '../../src/status/user-input.js';

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

/** What the tab needs of a document's REST entity to decide whether the user may change it. */
export interface Changeable {
  isVersion?: boolean;
  isTrashed?: boolean;
  /** The `permissions` enricher, which Web UI asks for on every document (web-ui-properties.xml). */
  contextParameters?: { permissions?: string[] };
}

/** Whether this user may change the document at all, as Web UI's own edit button decides (WriteProperties, not a version). */
export function mayChange(document: Changeable): boolean {
  const permissions = document.contextParameters?.permissions ?? [];
  return document.isVersion !== true && document.isTrashed !== true && permissions.includes('WriteProperties');
}

/** The values the job still waits for, by its own readiness rules, over every use case the document carries. */
export function missingKeys(facets: readonly string[], properties: Properties): string[] {
  return [...new Set(useCasesOf(facets).flatMap((useCase) => missingValues(useCase, properties)))];
}

/**
 * The values this user may change, when the document lets them change any: the list the intake
 * wrote from the mapping entry; for a document labelled before it wrote one, the defaults and
 * whatever the job still waits for.
 */
export function userInputKeys(facets: readonly string[], properties: Properties): string[] {
  const declared = userInputOf(properties[STATUS.userInput]);
  if (declared !== undefined) return declared;
  return [...new Set(useCasesOf(facets).flatMap((useCase) => userInputFor(useCase, properties)))];
}

/**
 * The connector's message, unless it only lists the values the job waits for: the status line
 * says that itself, with the fields' labels and as they are now.
 */
export function shownMessage(properties: Properties): string | undefined {
  const message = properties[STATUS.message];
  if (!isSet(message)) return undefined;
  const text = String(message);
  return properties[STATUS.status] === 'PENDING_INPUT' && waitsForValues(text) ? undefined : text;
}

/** How a value is a date: the status facet's and the connection's times, the archive date (`YYYY-MM-DD`). */
export function dateKind(value: unknown): 'dateTime' | 'date' | undefined {
  if (typeof value !== 'string') return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date';
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) && !Number.isNaN(Date.parse(value)) ? 'dateTime' : undefined;
}

/**
 * The address that opens the linked business object in SAP, when the document is linked and the
 * address is a web address: any user who may write the document may write the property too, so
 * nothing else (`javascript:`, a relative path) becomes a link.
 */
export function openInSapUrl(properties: Properties): string | undefined {
  const url = properties[STATUS.sapUrl];
  if (properties[STATUS.status] !== 'DONE' || typeof url !== 'string' || !/^https?:\/\//i.test(url)) return undefined;
  try {
    // Not URL.canParse: Web UI runs in browsers older than it (Chrome 120, Firefox 115, Safari 17).
    new URL(url);
    return url;
  } catch {
    return undefined;
  }
}

/** SAP's data the package's schema keeps (erp_data.xsd), in the order the tab shows it; the currency with the amount when there is one. */
export const SAP_DATA_KEYS = [
  'erpData:vendor',
  'erpData:companyCode',
  'erpData:amount',
  'erpData:currency',
  'erpData:documentDate',
  'erpData:postingDate',
  'erpData:reference',
  'erpData:purchasingOrganization',
  'erpData:readAt',
] as const;

/**
 * SAP's dates (xs:date): Nuxeo answers them as midnight UTC, so they are shown as that day, in
 * no time zone, or a user west of UTC would see the day before.
 */
export const SAP_DATES: readonly string[] = ['erpData:documentDate', 'erpData:postingDate'];

/**
 * Stored by SAP through the content server: the feature's facet without a use case's. The job
 * gives every document it labels, and its archive-link folder, a use-case facet; `serve` gives the
 * documents SAP stores and their components none.
 */
export const storedBySap = (facets: readonly string[]): boolean =>
  facets.includes(HTTP_CONTENT_FACET) && useCasesOf(facets).length === 0;

/** No value: what the job's readiness rules read as missing. */
export const isEmpty = (value: unknown): boolean => !isSet(value);

/**
 * The properties a save sends: those the user changed, as Web UI's own edit form does; a value
 * emptied is sent as null, which the job's readiness rules read as missing.
 */
export function changedValues(original: Properties, edited: Properties): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(edited)
      .filter(([key, value]) => value !== original[key] && !(isEmpty(value) && isEmpty(original[key])))
      .map(([key, value]) => [key, isEmpty(value) ? null : value]),
  );
}

/** The i18n key of a property's label: `erp.property.<schema prefix>.<name>`. */
export const labelKey = (key: string): string => `erp.property.${key.replace(':', '.')}`;
