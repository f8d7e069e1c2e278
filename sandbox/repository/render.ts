import { aceId, aceStatus, type Acl } from './acl.js';
import type { FieldDef, SchemaDef } from '../../common/nuxeo/schemas.js';
import type { Store, StoredBlob, StoredDoc } from './store.js';

/** Which schemas to render, from the `properties` header; undefined means no `properties` key. */
export type SchemaSelection = '*' | string[] | undefined;

/** An absent value: lists are empty, anything else null (the only complex field, files:files, is a list). */
function defaultValue(field: FieldDef): unknown {
  return field.list ? [] : null;
}

function blobEntity(
  blob: StoredBlob,
  baseUrl: string,
  doc: StoredDoc,
  xpath: string,
  token: string,
): Record<string, unknown> {
  const url = `${baseUrl}/nxfile/default/${doc.uid}/${xpath}/${encodeURIComponent(blob.name)}?changeToken=${token}`;
  return { ...blob, data: url, blobUrl: url };
}

function renderValue(
  value: unknown,
  field: FieldDef,
  ctx: { baseUrl: string; doc: StoredDoc; xpath: string; token: string },
): unknown {
  if (value === undefined || value === null) return defaultValue(field);
  if (field.list) {
    return (value as unknown[]).map((item, i) =>
      renderValue(item, { ...field, list: false }, { ...ctx, xpath: `${ctx.xpath}/${i}` }),
    );
  }
  if (field.type === 'blob') return blobEntity(value as StoredBlob, ctx.baseUrl, ctx.doc, ctx.xpath, ctx.token);
  if (field.type === 'complex') {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(
      (field.fields as FieldDef[]).map((f) => [
        f.name,
        renderValue(record[f.name], f, { ...ctx, xpath: `${ctx.xpath}/${f.name}` }),
      ]),
    );
  }
  return value;
}

/** The document entity, keys in the order the real server writes them. */
export function renderDocument(
  store: Store,
  doc: StoredDoc,
  selection: SchemaSelection,
  baseUrl: string,
): Record<string, unknown> {
  const token = store.changeToken(doc);
  const schemas = store.schemasOf(doc);
  const entity: Record<string, unknown> = {
    'entity-type': 'document',
    repository: 'default',
    uid: doc.uid,
    path: doc.path,
    type: doc.type,
    state: doc.state,
    parentRef: doc.parentId,
    isCheckedOut: true,
    isRecord: false,
    retainUntil: null,
    hasLegalHold: false,
    isUnderRetentionOrLegalHold: false,
    isVersion: false,
    isProxy: false,
    changeToken: token,
    isTrashed: doc.trashed,
    title: doc.properties['dc:title'] ?? doc.name,
  };
  if (doc.properties['dc:modified'] !== undefined) entity.lastModified = doc.properties['dc:modified'];
  if (selection !== undefined) {
    const properties: Record<string, unknown> = {};
    for (const name of schemas) {
      if (selection !== '*' && !selection.includes(name)) continue;
      const schema = store.registry.schemas.get(name) as SchemaDef;
      for (const field of schema.fields.values()) {
        const key = `${schema.prefix}:${field.name}`;
        properties[key] = renderValue(doc.properties[key], field, { baseUrl, doc, xpath: key, token });
      }
    }
    entity.properties = properties;
  }
  entity.facets = store.facetsOf(doc);
  entity.schemas = schemas.map((name) => ({ name, prefix: (store.registry.schemas.get(name) as SchemaDef).prefix }));
  return entity;
}

interface PageInfo {
  total: number;
  /** When the total is unknown (-1): whether a document matches after this page. */
  more?: boolean;
  pageSize: number;
  maxPageSize?: number;
  pageIndex: number;
  offset: number;
  paginated: boolean;
  /** An Elasticsearch-backed search pages no further than this (ElasticSearchNxqlPageProvider). */
  maxResultWindow?: number;
}

/**
 * The `documents` entity with the pagination fields of DefaultListJsonWriter. A total of -1
 * is unknown (PageProvider.UNKNOWN_SIZE). isNextPageAvailable is AbstractPageProvider's, from the
 * total, not from how many documents this page holds (an index may have dropped some), and for
 * Elasticsearch only while `offset + 2 × pageSize` stays within the result window.
 */
export function renderPage(entries: Array<Record<string, unknown>>, page: PageInfo): Record<string, unknown> {
  const known = page.total >= 0;
  const pages = !page.paginated ? 1 : known ? Math.max(1, Math.ceil(page.total / page.pageSize)) : -1;
  const inWindow = page.maxResultWindow === undefined || page.offset + 2 * page.pageSize <= page.maxResultWindow;
  const next = page.paginated && inWindow && (known ? page.total > page.pageSize + page.offset : page.more === true);
  return {
    'entity-type': 'documents',
    isPaginable: true,
    resultsCount: page.total,
    pageSize: page.pageSize,
    maxPageSize: page.maxPageSize ?? 1000,
    resultsCountLimit: 0,
    currentPageSize: entries.length,
    currentPageIndex: page.pageIndex,
    currentPageOffset: page.offset,
    numberOfPages: pages,
    isPreviousPageAvailable: page.pageIndex > 0,
    isNextPageAvailable: next,
    isLastPageAvailable: next,
    isSortable: true,
    hasError: false,
    errorMessage: null,
    totalSize: page.total,
    pageIndex: page.pageIndex,
    pageCount: pages,
    entries,
  };
}

function renderAces(acl: Acl): Array<Record<string, unknown>> {
  return acl.aces.map((ace) => ({ id: aceId(ace), ...ace, status: aceStatus(ace) }));
}

/** `@acl`: the local ACLs, then a synthetic `inherited` ACL with every ancestor's ACEs. */
export function renderAcls(store: Store, doc: StoredDoc): Record<string, unknown> {
  const [own, ...ancestors] = store.aclChain(doc);
  const acl = own.map((a) => ({ name: a.name, ace: renderAces(a) }));
  const inherited = ancestors.flat().flatMap(renderAces);
  if (inherited.length > 0) acl.push({ name: 'inherited', ace: inherited });
  return { 'entity-type': 'acls', acl };
}

/** Error entity; messages of 5xx are hidden as in production mode. */
export function renderException(status: number, message: string): Record<string, unknown> {
  return { 'entity-type': 'exception', status, message: status >= 500 ? 'Internal Server Error' : message };
}
