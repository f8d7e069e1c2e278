import { createHash, X509Certificate } from 'node:crypto';
import { unlessMissing, type RepositoryClient } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { identityOf, type CertificateFile } from './certificate-file.js';
import type { TrustedCertificate } from './signature.js';

const CERTIFICATE_FACET = 'fct_erp_certificate';
/** The folder below `adminPath` that holds SAP's certificates: administrators only, like the mapping file. */
const CERTIFICATES_FOLDER = 'sap-certificates';

const CERTIFICATE_STATUSES = ['pending', 'approved', 'revoked'] as const;
export type CertificateStatus = (typeof CERTIFICATE_STATUSES)[number];

export interface StoredCertificate {
  uid: string;
  /** The document's name: `<contRep>-<16 hex of a hash of connection, authId and fingerprint>`. */
  name: string;
  connection: string;
  contRep: string;
  authId: string;
  status: CertificateStatus;
  subject: string;
  fingerprint: string;
  notAfter: string;
  receivedAt: string;
  pem: string;
}

const P = 'erpCertificate:';

function stored(doc: RepositoryDocument): StoredCertificate | undefined {
  if (!doc.facets.includes(CERTIFICATE_FACET)) return undefined;
  const text = (key: string): string => String(doc.properties[`${P}${key}`] ?? '');
  const status = text('status');
  return {
    uid: doc.uid,
    name: doc.path.slice(doc.path.lastIndexOf('/') + 1),
    connection: text('connection'),
    contRep: text('contRep'),
    authId: text('authId'),
    status: (CERTIFICATE_STATUSES as readonly string[]).includes(status) ? (status as CertificateStatus) : 'pending',
    subject: text('subject'),
    fingerprint: text('fingerprint'),
    notAfter: text('notAfter'),
    receivedAt: text('receivedAt'),
    pem: String(doc.properties['note:note'] ?? ''),
  };
}

/** Whether a certificate signs at `now`: approved by an administrator and not expired. */
export const signsAt = (certificate: StoredCertificate, now: number): boolean =>
  certificate.status === 'approved' && !(Date.parse(certificate.notAfter) < now);

/** An approved certificate made ready for signature checks; one that no longer parses signs nothing. */
export function trusted(certificate: StoredCertificate): TrustedCertificate | undefined {
  try {
    const x509 = new X509Certificate(certificate.pem);
    return {
      ...identityOf(x509.raw),
      publicKey: x509.publicKey,
      fingerprint: certificate.fingerprint,
    };
  } catch {
    return undefined;
  }
}

/**
 * SAP's certificates, kept in the repository under `adminPath` so that every replica of the
 * content server and the administrator's `connect2erp certs` see the same list. putCert files a
 * certificate as pending; only an administrator's approval makes it sign anything.
 */
export class CertificateStore {
  readonly folderPath: string;

  constructor(
    private readonly client: RepositoryClient,
    adminPath: string,
    /** Pending filings per content repository; a new one replaces the oldest beyond them. */
    private readonly maxPending = 10,
  ) {
    this.folderPath = `${adminPath.replace(/\/$/, '')}/${CERTIFICATES_FOLDER}`;
  }

  /** Every certificate filed; none while the folder does not exist yet. */
  async list(): Promise<StoredCertificate[]> {
    const folder = await this.folder(false);
    if (folder === undefined) return [];
    const children = await this.client.children(folder.uid);
    return children.flatMap((doc) => stored(doc) ?? []);
  }

  /**
   * File a certificate as pending. One already filed keeps its status (a putCert, which nobody
   * signs, never undoes an approval or a revocation). Answers whether it was new, and the waiting
   * filings it replaced.
   */
  async receive(
    origin: { connection: string; contRep: string; authId: string },
    file: CertificateFile,
  ): Promise<{ outcome: 'filed' | 'known'; replaced: StoredCertificate[] }> {
    const folder = (await this.folder(true)) as RepositoryDocument;
    // One filing per connection, content repository, authId and certificate: a certificate filed
    // under another authId (by anyone: putCert is unsigned) never stands in the way of SAP's own.
    const key = createHash('sha256')
      .update(`${origin.connection}\n${origin.authId}\n${file.fingerprint}`)
      .digest('hex');
    const name = `${origin.contRep}-${key.slice(0, 16).toUpperCase()}`;
    let doc = await this.find(`${this.folderPath}/${name}`);
    // Filed before, unless a filing was cut short (its properties are written last).
    if (doc !== undefined && stored(doc)?.fingerprint === file.fingerprint) return { outcome: 'known', replaced: [] };
    const replaced = doc === undefined ? await this.makeRoom(origin.contRep) : [];
    if (doc === undefined) {
      doc = await this.client.createNamed(folder.uid, { type: 'Note', name });
      // Another replica filed the same certificate at the same moment: its document stands.
      if (!doc.path.endsWith(`/${name}`)) {
        await this.client.remove(doc.uid);
        return { outcome: 'known', replaced };
      }
    }
    await this.client.addFacet([doc.uid], CERTIFICATE_FACET);
    await this.client.setProperties(doc.uid, {
      'dc:title': file.subject,
      'note:note': file.pem,
      'note:mime_type': 'text/plain',
      [`${P}connection`]: origin.connection,
      [`${P}contRep`]: origin.contRep,
      [`${P}authId`]: origin.authId,
      [`${P}status`]: 'pending',
      [`${P}subject`]: file.subject,
      [`${P}fingerprint`]: file.fingerprint,
      [`${P}notAfter`]: file.notAfter,
      [`${P}receivedAt`]: new Date().toISOString(),
    });
    return { outcome: 'filed', replaced };
  }

  /** The repository records who made the change (dc:lastContributor, with the account of storage.yaml). */
  async setStatus(certificate: StoredCertificate, status: CertificateStatus): Promise<void> {
    await this.client.setProperties(certificate.uid, {
      [`${P}status`]: status,
      [`${P}decidedAt`]: new Date().toISOString(),
    });
  }

  /**
   * putCert is unsigned (the protocol's): so many filings at most wait for an administrator per
   * content repository. The oldest waiting ones give way to a new one, so that strangers filling the
   * queue never keep SAP's own registration out (it is the newest when SAP sends it); they are
   * removed, and returned.
   */
  private async makeRoom(contRep: string): Promise<StoredCertificate[]> {
    const pending = (await this.list())
      .filter((c) => c.contRep === contRep && c.status === 'pending')
      .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt));
    const oldest = pending.slice(0, Math.max(0, pending.length - this.maxPending + 1));
    for (const certificate of oldest) await this.client.remove(certificate.uid);
    return oldest;
  }

  private find(path: string): Promise<RepositoryDocument | undefined> {
    return unlessMissing(this.client.getByPath(path));
  }

  private async folder(create: boolean): Promise<RepositoryDocument | undefined> {
    const existing = await this.find(this.folderPath);
    if (existing !== undefined || !create) return existing;
    const parentPath = this.folderPath.slice(0, this.folderPath.lastIndexOf('/'));
    const parent = await this.client.getByPath(parentPath);
    const created = await this.client.createNamed(parent.uid, { type: 'Folder', name: CERTIFICATES_FOLDER });
    if (created.path === this.folderPath) return created;
    await this.client.remove(created.uid);
    return this.client.getByPath(this.folderPath);
  }
}
