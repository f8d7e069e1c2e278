import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { projectRoot } from '../../common/project.js';

const name = z.string().min(1);
const agent = z.strictObject({ otype: z.enum(['US', 'C', 'O', 'P', 'S', 'A']), objid: name });

/** The ERP sandbox's customizing file: what SAP would hold in OAC0, OAC2, OAC3, OAC5, the ArchiveLink workflow presettings, its user store and authorisations. */
const customizingSchema = z.strictObject({
  clients: z.array(z.string().regex(/^\d{3}$/)).min(1),
  /** Logon users, the function modules each may call (S_RFC) and the tables each may read (S_TABU_NAM); `*` for any. */
  users: z.record(
    name,
    z.strictObject({
      password: name,
      rfc: z.union([z.literal('*'), z.array(name)]).default('*'),
      tables: z.union([z.literal('*'), z.array(name)]).default([]),
    }),
  ),
  /** OAuth 2.0 clients (a communication arrangement's): their secret, the user their tokens stand for, how long a token lives. */
  oauthClients: z
    .record(
      name,
      z.strictObject({
        secret: name.optional(),
        /** A client that authenticates with its TLS certificate (RFC 8705 tls_client_auth): the certificate's subject, as certificateUsers writes it. */
        certificate: name.optional(),
        user: name,
        lifetimeS: z.number().int().positive().default(3600),
      }),
    )
    .default({}),
  /**
   * Client certificates a user signs in with (table VUSREXTID, external ID type DN): the subject's
   * distinguished name, leaf first as SAP writes it (`CN=CONNECTOR, O=…`), to the user.
   */
  certificateUsers: z.record(name, name).default({}),
  /** OAC0. */
  contentRepositories: z.array(name),
  /** TOADD: technical document classes (PDF, TIF, FAX…), what BAPI_BARCODE_SENDLIST's DOCTYPE names. */
  documentClasses: z.array(name),
  /** OAC2: ArchiveLink document type -> its document class. */
  documentTypes: z.record(name, name),
  /** OAC3 (TOAOM): which document type may be linked to which object type, stored in which content repository. */
  links: z.array(z.strictObject({ objectType: name, documentType: name, contentRepository: name })),
  /** OAC5: whether one bar code may be used for several documents, and the bar code check (a regular expression). */
  barcode: z.strictObject({ duplicates: z.boolean(), check: name }),
  /** Storing for subsequent entry: the agents of the work item, per document type (the presetting). */
  presettings: z.record(name, z.array(agent).min(1)),
  /** Workflow templates SAP_WAPI_START_WORKFLOW may start. */
  workflowTasks: z.array(name),
  /** Agents that exist, by object type (US user, O organisational unit, S position, …). */
  agents: z.partialRecord(z.enum(['US', 'C', 'O', 'P', 'S', 'A']), z.array(name)),
  /**
   * Business documents the read calls find (RBKP-like: supplier invoices by BELNR and GJAHR; EKKO-
   * like: purchase orders by EBELN). Amounts as text, as SAP's SOAP runtime and OData V2 write them;
   * dates as `YYYYMMDD`, as ABAP keeps them.
   */
  supplierInvoices: z
    .array(
      z.strictObject({
        BELNR: z.string().regex(/^\d{10}$/),
        GJAHR: z.string().regex(/^\d{4}$/),
        BUKRS: name,
        LIFNR: z.string().regex(/^\d{1,10}$/),
        RMWWR: z.string().regex(/^\d+\.\d{2}$/),
        WAERS: name,
        BLDAT: z.string().regex(/^\d{8}$/),
        BUDAT: z.string().regex(/^\d{8}$/),
        XBLNR: z.string(),
      }),
    )
    .default([]),
  purchaseOrders: z
    .array(
      z.strictObject({
        EBELN: z.string().regex(/^\d{10}$/),
        BUKRS: name,
        LIFNR: z.string().regex(/^\d{1,10}$/),
        EKORG: name,
        WAERS: name,
        BEDAT: z.string().regex(/^\d{8}$/),
      }),
    )
    .default([]),
});

export type Customizing = z.infer<typeof customizingSchema>;

const DEFAULT_CUSTOMIZING = join(projectRoot(import.meta.dirname), 'sandbox', 'erp', 'sap-customizing.yaml');

export function loadCustomizing(path = DEFAULT_CUSTOMIZING): Customizing {
  return customizingSchema.parse(parse(readFileSync(path, 'utf8')));
}
