import type { Env } from './env.js';
import { MAPPING } from './env.js';
import { NO_BLOBS, type StoredDoc } from '../../sandbox/repository/store.js';

/** Paths of the sandbox's workspaces, from the folder names under ERP. */
const ERP = '/default-domain/workspaces/ERP';

/**
 * `names` as new File documents in `ERP/<folder>`, written straight into the repository sandbox
 * (and its search index), as uploads long before the run: faster than uploading each over HTTP.
 * The folder is made when missing.
 */
export function addFiles(env: Env, folder: string, names: string[]): string[] {
  const { store } = env.sandbox;
  const actor = env.sandbox.actor();
  return env.sandbox.index.sync(() => {
    const parent =
      store.getByPath(`${ERP}/${folder}`) ??
      store.create(
        actor,
        store.getByPath(ERP) as StoredDoc,
        { type: 'Workspace', name: folder, properties: {} },
        NO_BLOBS,
      );
    return names.map((name) => {
      const blob = store.storeBlob(Buffer.from(`%PDF-1.4 ${name}`), name, 'application/pdf');
      // Any blob reference stands for the one stored: what an upload batch's file would resolve to.
      const properties = { 'dc:title': name, 'file:content': { 'upload-batch': 'backlog', 'upload-fileId': '0' } };
      return store.create(actor, parent, { type: 'File', name, properties }, () => blob).uid;
    });
  });
}

type Entry = { path: string; facets: string[]; createParentALFolder: boolean; properties: Record<string, unknown> };

/**
 * The shipped mapping file with every value a document needs from the mapping (no user to fill
 * them in): invoices get an object id, scans their title as bar code, no archive-link folders;
 * then `change` makes what it will of the entries.
 */
export function completeMapping(change: (entries: Entry[]) => Entry[] = (entries) => entries): string {
  const { mapping } = JSON.parse(MAPPING) as { mapping: Entry[] };
  const entries = mapping.map((entry): Entry => {
    const properties = { ...entry.properties };
    if (entry.path.endsWith('/Invoices')) properties['erpCreateALDocument:erpObjectId'] = '100019000000222023';
    if (entry.path.endsWith('/Barcode')) properties['erpBarcode:barcode'] = '$dc:title';
    return { ...entry, createParentALFolder: false, properties };
  });
  return JSON.stringify({ mapping: change(entries) });
}
