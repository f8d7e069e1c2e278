import { CertificateStore, signsAt, trusted, type StoredCertificate } from './certificates.js';
import type { TrustedCertificate } from './signature.js';

interface Signers {
  /** Approved, unexpired and readable: the certificates a signature is checked against. */
  trusted: TrustedCertificate[];
  /** Filed for this content repository and authId but not approved (for the refusal's reason). */
  pending: number;
}

/**
 * The certificate list read from the repository, kept for `refreshMs` so that a signature check
 * costs no request; an approval or a revocation reaches every replica within that time.
 */
/** A filed certificate with its parsed form, made once per read of the list (parsing costs more than checking). */
interface Known {
  certificate: StoredCertificate;
  trusted?: TrustedCertificate;
}

export class ApprovedCertificates {
  private cached?: { at: number; list: Promise<Known[]> };

  constructor(
    private readonly store: CertificateStore,
    private readonly refreshMs: number,
  ) {}

  async signers(connection: string, contRep: string, authId: string): Promise<Signers> {
    const list = await this.list();
    const mine = list.filter(
      ({ certificate: c }) => c.connection === connection && c.contRep === contRep && c.authId === authId,
    );
    const now = Date.now();
    return {
      trusted: mine.filter(({ certificate }) => signsAt(certificate, now)).flatMap((known) => known.trusted ?? []),
      pending: mine.filter(({ certificate: c }) => c.status === 'pending').length,
    };
  }

  /** The approved, unexpired and readable certificates of a content repository, whatever their authId (getCert). */
  async active(connection: string, contRep: string): Promise<StoredCertificate[]> {
    const now = Date.now();
    return (await this.list())
      .filter(({ certificate: c, trusted }) => {
        return signsAt(c, now) && trusted !== undefined && c.connection === connection && c.contRep === contRep;
      })
      .map(({ certificate }) => certificate);
  }

  /** A putCert filed something: the next check reads the list again. */
  forget(): void {
    this.cached = undefined;
  }

  private list(): Promise<Known[]> {
    const now = Date.now();
    if (this.cached === undefined || now - this.cached.at >= this.refreshMs) {
      const list = this.store
        .list()
        .then((certificates) => certificates.map((certificate) => ({ certificate, trusted: trusted(certificate) })));
      this.cached = { at: now, list };
      // A failed read is not kept: the next request tries again.
      list.catch(() => {
        if (this.cached?.list === list) this.cached = undefined;
      });
    }
    return this.cached.list;
  }
}
