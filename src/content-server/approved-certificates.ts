import { CertificateStore, trusted, type StoredCertificate } from './certificates.js';
import type { TrustedCertificate } from './signature.js';

export interface Signers {
  /** Approved, unexpired and readable: the certificates a signature is checked against. */
  trusted: TrustedCertificate[];
  /** Filed for this content repository and authId but not approved (for the refusal's reason). */
  pending: number;
}

/**
 * The certificate list read from the repository, kept for `refreshMs` so that a signature check
 * costs no request; an approval or a revocation reaches every replica within that time.
 */
export class ApprovedCertificates {
  private cached?: { at: number; list: Promise<StoredCertificate[]> };

  constructor(
    private readonly store: CertificateStore,
    private readonly refreshMs: number,
  ) {}

  async signers(connection: string, contRep: string, authId: string): Promise<Signers> {
    const list = await this.list();
    const mine = list.filter((c) => c.connection === connection && c.contRep === contRep && c.authId === authId);
    const now = Date.now();
    return {
      trusted: mine
        .filter((c) => c.status === 'approved' && !(Date.parse(c.notAfter) < now))
        .flatMap((c) => trusted(c) ?? []),
      pending: mine.filter((c) => c.status === 'pending').length,
    };
  }

  /** A putCert filed something: the next check reads the list again. */
  forget(): void {
    this.cached = undefined;
  }

  private list(): Promise<StoredCertificate[]> {
    const now = Date.now();
    if (this.cached === undefined || now - this.cached.at >= this.refreshMs) {
      const list = this.store.list();
      this.cached = { at: now, list };
      // A failed read is not kept: the next request tries again.
      list.catch(() => {
        if (this.cached?.list === list) this.cached = undefined;
      });
    }
    return this.cached.list;
  }
}
