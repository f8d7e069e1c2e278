import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { templateYaml } from '../../src/config/templates.js';
import { NO_BLOBS, type StoredDoc } from '../../sandbox/repository/store.js';
import { MAPPING, sandboxEnv, type Env } from './env.js';

/** The shipped mapping with supplier invoices (BUS2081, key BELNR + GJAHR) in ERP/Invoices. */
export const INVOICES = MAPPING.replace(
  '"erpCreateALDocument:erpObject": "BKPF"',
  '"erpCreateALDocument:erpObject": "BUS2081"',
);

const WEBGUI =
  'https://sap.example.com/sap/bc/gui/sap/its/webgui?~transaction=*MIR4%20RBKP-BELNR={u:BELNR};RBKP-GJAHR={u:GJAHR};DYNP_OKCODE=/00';

const OPEN_IN_SAP = `    openInSap:
      BUS2081:
        url: '${WEBGUI}'
        values:
          BELNR: { property: erpCreateALDocument:erpObjectId, transform: [{ substring: { start: 0, length: 10 } }] }
          GJAHR: { property: erpCreateALDocument:erpObjectId, transform: [{ substring: { start: 10, length: 4 } }] }
`;

/**
 * The sandboxes with supplier invoices in ERP/Invoices, the link task reading each one's data from
 * SAP after linking it (the read-supplier-invoice template) and S4H opening them in SAP GUI for HTML.
 */
export async function invoiceEnv(
  t: Test,
  transport: 'RFC' | 'Rest' = 'RFC',
  options: Parameters<typeof sandboxEnv>[1] = {},
  read: 'read-supplier-invoice' | 'read-purchase-order' = 'read-supplier-invoice',
): Promise<Env> {
  const env = await sandboxEnv(t, { mapping: INVOICES, ...options });
  configureReads(env, transport, read);
  return env;
}

/** The link task over `transport` reading SAP's data with the `read` template, and S4H opening supplier invoices in SAP. */
export function configureReads(
  env: Env,
  transport: 'RFC' | 'Rest' = 'RFC',
  read: 'read-supplier-invoice' | 'read-purchase-order' = 'read-supplier-invoice',
): void {
  const task = join(env.location.jobsDir, 'link.yaml');
  writeFileSync(task, readFileSync(task, 'utf8').replace(/^function: RFC.*$/m, `function: ${transport}`));
  appendFileSync(task, templateYaml(read, transport) as string);
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(/^ *maxConcurrentCalls: 8\n/m, `$&${OPEN_IN_SAP}`));
}

/**
 * What `serve` leaves for a create of SAP's (content-server/documents/archive-writer.ts): a folder
 * named by its docId in ERP/, with the feature's facet and the one of documents SAP stored; its uid.
 */
export function storedBySap(env: Env, docId: string): string {
  const { store } = env.sandbox;
  const actor = env.sandbox.actor();
  const parent = store.getByPath('/default-domain/workspaces/ERP') as StoredDoc;
  let stored = store.create(actor, parent, { type: 'Folder', name: docId, properties: {} }, NO_BLOBS);
  stored = store.addFacet(actor, store.addFacet(actor, stored, 'fct_erp_http_content'), 'fct_erp_sap_document');
  env.fill(stored.uid, {
    'erpHttpContent:docId': docId,
    'erpHttpContent:archiveId': 'Z1',
    'erpHttpContent:source': 'S4H',
    'erpSapDocument:complete': true,
  });
  return stored.uid;
}
