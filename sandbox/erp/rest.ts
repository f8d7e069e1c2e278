import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from '../http.js';
import type { Customizing } from './customizing.js';
import type { ErpTables } from './call-context.js';

export const ATTACHMENT_SERVICE = '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV';

/** The OData V2 error body SAP Gateway sends. */
function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify({ error: { code, message: { lang: 'en', value: message } } });
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(text);
}

/** `'BKPF'` → `BKPF`: an OData string literal, quotes doubled inside. */
const literal = (value: string | null): string => (value ?? '').replace(/^'(.*)'$/s, '$1').replace(/''/g, "'");

/**
 * SAP Gateway's CSRF protection as the job meets it: a token fetched with `X-CSRF-Token: Fetch`
 * belongs to the session cookie it came with; a write without both is answered 403
 * `X-CSRF-Token: Required`. `expireSessions()` forgets them all, as a Gateway restart would.
 */
export class CsrfSessions {
  /** Session cookie → CSRF token; readable so tests can check that neither leaks. */
  readonly sessions = new Map<string, string>();

  expireSessions(): void {
    this.sessions.clear();
  }

  /** Answers the fetch on a read; returns false when the request needs no more handling. */
  fetch(req: IncomingMessage, res: ServerResponse, client: string): boolean {
    if (String(req.headers['x-csrf-token']).toLowerCase() !== 'fetch') return false;
    const session = randomBytes(12).toString('hex');
    const token = randomBytes(16).toString('base64');
    this.sessions.set(session, token);
    res.setHeader('X-CSRF-Token', token);
    res.setHeader('Set-Cookie', [
      `SAP_SESSIONID_SBX_${client}=${session}; path=/; HttpOnly`,
      `sap-usercontext=sap-client=${client}; path=/`,
    ]);
    return true;
  }

  /** True when a write carries a token that belongs to its session cookie. */
  valid(req: IncomingMessage, client: string): boolean {
    const cookie = (req.headers.cookie ?? '').split(/;\s*/).find((c) => c.startsWith(`SAP_SESSIONID_SBX_${client}=`));
    const token = cookie === undefined ? undefined : this.sessions.get(cookie.slice(cookie.indexOf('=') + 1));
    return token !== undefined && req.headers['x-csrf-token'] === token;
  }
}

interface RestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  client: string;
  tables: ErpTables;
  customizing: Customizing;
  csrf: CsrfSessions;
}

function refuseWithoutToken(ctx: RestContext): boolean {
  if (ctx.csrf.valid(ctx.req, ctx.client)) return false;
  sendError(ctx.res, 403, '/IWFND/CM_BEC/026', 'CSRF token validation failed', { 'X-CSRF-Token': 'Required' });
  return true;
}

/** An attachment as the service keeps it, with its document numbers. */
function attach(
  ctx: RestContext,
  entity: Omit<ErpTables['attachments'][number], 'client' | 'DocumentInfoRecordDocNumber' | 'ArchiveDocumentID'>,
): Record<string, string> {
  const { client, tables } = ctx;
  const row = {
    client,
    ...entity,
    DocumentInfoRecordDocNumber: String(tables.attachments.length + 1).padStart(10, '0'),
    ArchiveDocumentID: createHash('md5')
      .update(`${client}${entity.BusinessObjectTypeName}${entity.LinkedSAPObjectKey}${tables.attachments.length}`)
      .digest('hex')
      .toUpperCase(),
  };
  tables.attachments.push(row);
  const { client: _, ...body } = row;
  return body;
}

/** The real service words a wrong object type or key as an authorisation problem. */
function refuseObject(ctx: RestContext, type: string, key: string): boolean {
  if (ctx.customizing.links.some((link) => link.objectType === type) && key !== '') return false;
  sendError(
    ctx.res,
    403,
    'CV_ATTACHMENT_SRV/003',
    `User has no authorization for operation 03 on object ${type} ${key}`,
  );
  return true;
}

/**
 * CreateUrlAsAttachment's parameters, each an Edm.String of the function import (lengths of the
 * service's generated ABAP proxy; Url unbounded). Gateway reads function-import parameters as URI
 * literals (OData V2 URI conventions: an Edm.String is quoted, a quote inside doubled) and refuses
 * one that is not: the stricter reading, as the sources do not say what it does with a bare value.
 */
const URL_PARAMETERS = {
  BusinessObjectTypeName: 40,
  LinkedSAPObjectKey: 90,
  Url: Infinity,
  UrlDescription: 255,
  MIMEType: 40,
  SemanticObject: 40,
} as const;

function urlParameters(ctx: RestContext): Record<keyof typeof URL_PARAMETERS, string> | undefined {
  const values: Record<string, string> = {};
  for (const [name, length] of Object.entries(URL_PARAMETERS)) {
    const raw = ctx.url.searchParams.get(name);
    if (raw === null) {
      values[name] = '';
      continue;
    }
    if (!/^'(?:[^']|'')*'$/s.test(raw)) {
      sendError(ctx.res, 400, '/IWBEP/CM_MGW_RT/004', `Malformed URI literal syntax in parameter ${name}`);
      return undefined;
    }
    values[name] = literal(raw);
    if (values[name].length > length) {
      sendError(ctx.res, 400, '/IWBEP/CM_MGW_RT/004', `Parameter ${name} is longer than ${length} characters`);
      return undefined;
    }
  }
  return values;
}

/**
 * CreateUrlAsAttachment (POST, SAP's API documentation of API_CV_ATTACHMENT_SRV): an attachment that
 * holds an address instead of a file. Answered with the AttachmentContent entity (the SAP Cloud SDK
 * types the function import's result so); GetAllOriginals gives the address back as DocumentURL. What
 * SAP puts in FileName for an URL is not documented: here the description.
 */
function createUrlAttachment(ctx: RestContext): void {
  if (refuseWithoutToken(ctx)) return;
  const values = urlParameters(ctx);
  if (values === undefined) return;
  if (refuseObject(ctx, values.BusinessObjectTypeName, values.LinkedSAPObjectKey)) return;
  if (!/^https?:\/\/[^/\s]+/i.test(values.Url))
    return sendError(ctx.res, 400, 'CV_ATTACHMENT_SRV/011', `URL "${values.Url}" is not an absolute http(s) address`);
  const body = attach(ctx, {
    BusinessObjectTypeName: values.BusinessObjectTypeName,
    LinkedSAPObjectKey: values.LinkedSAPObjectKey,
    FileName: values.UrlDescription,
    MimeType: values.MIMEType,
    FileSize: '0',
    DocumentURL: values.Url,
  });
  sendJson(ctx.res, 200, { d: body });
}

/** `API_CV_ATTACHMENT_SRV`: service root (token fetch), GetAllOriginals, the upload to AttachmentContentSet and CreateUrlAsAttachment. */
export async function attachmentService(ctx: RestContext, resource: string): Promise<void> {
  const { req, res, url, client, tables } = ctx;
  if (req.method === 'HEAD' || req.method === 'GET') ctx.csrf.fetch(req, res, client);
  if ((req.method === 'HEAD' || req.method === 'GET') && resource === '/')
    return sendJson(res, 200, { d: { EntitySets: ['AttachmentContentSet'] } });
  if (req.method === 'GET' && resource === '/GetAllOriginals') {
    const type = literal(url.searchParams.get('BusinessObjectTypeName'));
    const key = literal(url.searchParams.get('LinkedSAPObjectKey'));
    const results = tables.attachments.filter(
      (a) => a.client === client && a.BusinessObjectTypeName === type && a.LinkedSAPObjectKey === key,
    );
    return sendJson(res, 200, { d: { results: results.map(({ client: _, ...entity }) => entity) } });
  }
  if (resource === '/CreateUrlAsAttachment') {
    if (req.method !== 'POST')
      return sendError(res, 405, '/IWBEP/CM_MGW_RT/021', `Method ${req.method} not allowed for CreateUrlAsAttachment`);
    return createUrlAttachment(ctx);
  }
  if (req.method !== 'POST' || resource !== '/AttachmentContentSet')
    return sendError(res, 404, '/IWFND/MED/170', `No service found for ${url.pathname}`);
  if (refuseWithoutToken(ctx)) return;
  const header = (name: string): string => decodeURIComponent(String(req.headers[name.toLowerCase()] ?? ''));
  const type = header('BusinessObjectTypeName');
  const key = header('LinkedSAPObjectKey');
  const content = await readBody(req);
  if (refuseObject(ctx, type, key)) return;
  if (header('Slug') === '') return sendError(res, 400, 'CV_ATTACHMENT_SRV/010', 'File name (Slug) is missing');
  const body = attach(ctx, {
    BusinessObjectTypeName: type,
    LinkedSAPObjectKey: key,
    FileName: header('Slug'),
    MimeType: header('Content-Type') || 'application/octet-stream',
    FileSize: String(content.length),
    DocumentURL: '',
  });
  sendJson(res, 201, { d: body });
}

export const SUPPLIER_INVOICE_SERVICE = '/sap/opu/odata/sap/API_SUPPLIERINVOICE_PROCESS_SRV';
export const PURCHASE_ORDER_SERVICE = '/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV';

/** An ABAP date (`YYYYMMDD`) as OData V2 writes an Edm.DateTime in JSON (MS-ODATA 2.2.6.3.1). */
const odataDate = (date: string): string =>
  `/Date(${Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)))})/`;

/**
 * An entity's key predicate by key name: `(Name='a',Other='b')`, or `('a')` for an entity with one
 * key (OData V2, URI conventions 4.3.1); undefined when the path is not one of the entity set.
 */
function keyOf(resource: string, entitySet: string, keys: readonly string[]): Record<string, string> | undefined {
  const match = new RegExp(`^/${entitySet}\\((.*)\\)$`, 's').exec(decodeURIComponent(resource));
  if (match === null) return undefined;
  const single = /^'((?:[^']|'')*)'$/.exec(match[1]);
  if (single !== null && keys.length === 1) return { [keys[0]]: single[1].replace(/''/g, "'") };
  const pairs = [...match[1].matchAll(/(\w+)='((?:[^']|'')*)'/g)];
  return Object.fromEntries(pairs.map(([, name, value]) => [name, value.replace(/''/g, "'")]));
}

/**
 * The read of one supplier invoice or purchase order (API_SUPPLIERINVOICE_PROCESS_SRV's
 * A_SupplierInvoice, API_PURCHASEORDER_PROCESS_SRV's A_PurchaseOrder; properties and types as
 * their $metadata declares them): verbose JSON `{"d": {…}}`, Edm.Decimal as text, Edm.DateTime as
 * `/Date(ms)/`, the vendor in its external form (Gateway applies the conversion exit). Not found: 404.
 */
export function businessDocumentService(ctx: RestContext, service: string, resource: string): void {
  const { req, res, customizing } = ctx;
  if (req.method !== 'GET') return sendError(res, 405, '/IWBEP/CM_MGW_RT/021', `Method ${req.method} not allowed`);
  if (resource === '/')
    return sendJson(res, 200, {
      d: { EntitySets: [service === SUPPLIER_INVOICE_SERVICE ? 'A_SupplierInvoice' : 'A_PurchaseOrder'] },
    });
  if (service === SUPPLIER_INVOICE_SERVICE) {
    const key = keyOf(resource, 'A_SupplierInvoice', ['SupplierInvoice', 'FiscalYear']);
    const invoice = customizing.supplierInvoices.find(
      (i) => i.BELNR === key?.SupplierInvoice && i.GJAHR === key?.FiscalYear,
    );
    if (invoice !== undefined)
      return sendJson(res, 200, {
        d: {
          SupplierInvoice: invoice.BELNR,
          FiscalYear: invoice.GJAHR,
          CompanyCode: invoice.BUKRS,
          InvoicingParty: invoice.LIFNR,
          DocumentCurrency: invoice.WAERS,
          InvoiceGrossAmount: invoice.RMWWR,
          DocumentDate: odataDate(invoice.BLDAT),
          PostingDate: odataDate(invoice.BUDAT),
          SupplierInvoiceIDByInvcgParty: invoice.XBLNR,
        },
      });
  } else {
    const key = keyOf(resource, 'A_PurchaseOrder', ['PurchaseOrder']);
    const order = customizing.purchaseOrders.find((o) => o.EBELN === key?.PurchaseOrder);
    if (order !== undefined)
      return sendJson(res, 200, {
        d: {
          PurchaseOrder: order.EBELN,
          CompanyCode: order.BUKRS,
          Supplier: order.LIFNR,
          PurchasingOrganization: order.EKORG,
          DocumentCurrency: order.WAERS,
          PurchaseOrderDate: odataDate(order.BEDAT),
        },
      });
  }
  sendError(res, 404, '/IWBEP/CM_MGW_RT/020', `Resource not found for segment ${resource.slice(1)}`);
}
