import { SystemRefusalError } from '../../common/errors.js';
import { networkFailure } from './failure.js';

/**
 * How a server's refusal of a client certificate reaches the client: a TLS alert, or (TLS 1.3,
 * where the client counts the handshake done before the server has checked its certificate) the
 * connection closed under the first request, which alone would read like an answer lost.
 */
const REFUSED = /^(ERR_SSL_.*ALERT.*|ECONNRESET|EPIPE|UND_ERR_SOCKET)$/;

/** SAP refused the client certificate, or took it without a user to sign in: the system's refusal. */
export class CertificateRefusedError extends SystemRefusalError {}

/** What to do about it, for doctor. */
export const CERTIFICATE_ADVICE =
  "SAP must trust the certificate's issuer (STRUST, the SSL server PSE) and map its subject to the connector's user (CERTRULE, or table VUSREXTID); check tls.certFile and tls.keyFile in erpHttp.yaml";

/** A connection that failed as one does when the server refuses the client certificate: that refusal, else undefined. */
export function certificateRefusal(
  error: unknown,
  where: string,
  system: string,
  certFile: string,
): CertificateRefusedError | undefined {
  const code = String((error as { code?: string }).code);
  if (!REFUSED.test(code)) return undefined;
  return new CertificateRefusedError(
    `${where}: SAP refused the TLS client certificate ${certFile} (${code}): is it signed by a CA of SAP's SSL server PSE (STRUST), and valid? (tls.certFile of system ${system} in erpHttp.yaml)`,
    { target: where },
  );
}

/**
 * Whether SAP takes a system's client certificate, asked once before its first call with a HEAD of
 * the connection's address (`head`, which answers its HTTP status): a certificate SAP refuses, or
 * takes without a user mapped to it (401), is the system's refusal, named with its file, and no
 * document is charged; a server that cannot be reached stays unavailable, as for any call.
 * SAP's ICM asks for a certificate signed by a CA of its SSL server PSE and, with
 * icm/HTTPS/verify_client = 2, refuses a connection without one (help.sap.com, icm/HTTPS/verify_client);
 * the certificate's subject becomes a user through CERTRULE or table VUSREXTID.
 */
export async function certificateTaken(
  head: () => Promise<number>,
  where: string,
  system: string,
  certFile: string,
): Promise<void> {
  let status: number;
  try {
    status = await head();
  } catch (error) {
    throw certificateRefusal(error, where, system, certFile) ?? networkFailure(error, where, system);
  }
  if (status === 401)
    throw new CertificateRefusedError(
      `${where}: SAP took the TLS client certificate ${certFile} but signs no user in with it (HTTP 401): map its subject to the connector's user (CERTRULE, or table VUSREXTID)`,
      { status, target: where },
    );
}

/**
 * The check of a client's certificate, made once and shared by the calls waiting for it; one that
 * could not tell (SAP unreachable) is made again by the next call.
 */
export class CertificateCheck {
  private checked?: Promise<void>;

  constructor(private readonly check: () => Promise<void>) {}

  passed(): Promise<void> {
    this.checked ??= this.check().catch((error: unknown) => {
      if (!(error instanceof CertificateRefusedError)) this.checked = undefined;
      throw error;
    });
    return this.checked;
  }
}
