import type { ContentServerConnection } from '../../config/content-server-schema.js';
import type { ApprovedCertificates } from './approved-certificates.js';
import { ALWAYS_SIGNED, ArchiveLinkError, COMMANDS, STATUS } from '../protocol/protocol.js';
import type { ArchiveLinkUrl } from '../protocol/request-url.js';
import { verifySecKey } from './signature.js';

const refuse = (reason: string): ArchiveLinkError => new ArchiveLinkError(STATUS.securityBreach, reason);

/** `YYYYMMDDHHMMSS`, UTC. */
function expirationOf(text: string): number | undefined {
  const parts = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (parts === null) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number);
  const at = Date.UTC(year, month - 1, day, hour, minute, second);
  return new Date(at).getUTCDate() === day ? at : undefined;
}

/**
 * Whether a URL may do what it asks (docs/reference/sap-interfaces.md §3, "Security"): a
 * signature is needed when the command's access mode is in the document's protection; then
 * the URL's accessMode must include it, it must not have expired, and its secKey must be a
 * signature over its signed parameters by a certificate an administrator approved for this
 * content repository and authId. A secKey sent when none is needed is checked all the same.
 */
export class AccessCheck {
  constructor(
    private readonly connection: ContentServerConnection,
    private readonly certificates: ApprovedCertificates,
    private readonly clockSkewMs: number,
  ) {}

  /** `protection`: the document's docProt, or the connection's default for what has none yet. */
  async require(url: ArchiveLinkUrl, method: string, protection: string): Promise<void> {
    const rule = COMMANDS[url.command];
    if (rule.mode === undefined || this.connection.signatures === 'off') return;
    const secKey = url.get('secKey');
    if (!protection.includes(rule.mode) && secKey === undefined) return;
    if (!secKey) throw refuse(`the URL is not signed (no secKey), and ${url.command} needs a signature here`);
    const [accessMode, authId, expiration] = ['accessMode', 'authId', 'expiration'].map((key) => url.get(key));
    if (accessMode === undefined || authId === undefined || expiration === undefined)
      throw refuse('a signed URL needs accessMode, authId and expiration');
    if (!accessMode.includes(rule.mode))
      throw refuse(`accessMode "${accessMode}" does not allow ${url.command} (needs "${rule.mode}")`);
    const expires = expirationOf(expiration);
    if (expires === undefined) throw refuse(`expiration "${expiration}" is not YYYYMMDDHHMMSS`);
    if (Date.now() > expires + this.clockSkewMs) throw refuse(`the URL expired at ${expiration} UTC`);
    const contRep = url.get('contRep') as string;
    const signers = await this.certificates.signers(this.connection.name, contRep, authId);
    if (signers.trusted.length === 0)
      throw refuse(
        signers.pending > 0
          ? `the certificate of ${authId} for ${contRep} waits for an administrator's approval (connect2erp certs approve)`
          : `no approved certificate of ${authId} for ${contRep} (SAP sends it with putCert; an administrator approves it)`,
      );
    // The server took the request only for a method the command has.
    const signed = new Set<string>([
      ...ALWAYS_SIGNED,
      ...(rule.signed[method as keyof typeof rule.signed] as string[]),
    ]);
    const message = Buffer.from(
      url.parameters
        .filter((p) => signed.has(p.key))
        .map((p) => p.raw)
        .join(''),
      'latin1',
    );
    const legacy = this.connection.contentRepositories.find((r) => r.contRep === contRep)?.legacyDigests;
    const verdict = verifySecKey(secKey, message, signers.trusted, legacy);
    if (!verdict.valid) throw refuse(verdict.reason);
  }
}
