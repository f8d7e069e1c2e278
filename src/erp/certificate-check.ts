import { SystemRefusalError, SystemUnavailableError, type Connect2ErpError } from '../../common/errors.js';
import type { ErpSystemConfig } from '../config/erp-schema.js';
import { networkFailure } from './failure.js';

/**
 * How a server's refusal of a client certificate reaches the client: a TLS alert, or (TLS 1.3,
 * where the client counts the handshake done before the server has checked its certificate) the
 * connection closed under the first request, which alone would read like an answer lost.
 */
const ALERT = /^ERR_SSL_.*ALERT/;
const CLOSED = /^(ECONNRESET|EPIPE|UND_ERR_SOCKET)$/;

/** SAP refused the client certificate, or took it without a user to sign in: the system's refusal. */
export class CertificateRefusedError extends SystemRefusalError {}

/** What to do about it, for doctor. */
export const CERTIFICATE_ADVICE =
  "SAP must trust the certificate's issuer (STRUST, the SSL server PSE) and map its subject to the connector's user (CERTRULE, or table VUSREXTID); check tls.certFile and tls.keyFile in erpHttp.yaml";

/** The refusal a connection's failure `code` tells of. */
const refusal = (code: string, where: string, system: string, certFile: string): CertificateRefusedError =>
  new CertificateRefusedError(
    `${where}: SAP refused the TLS client certificate ${certFile} (${code}): is it signed by a CA of SAP's SSL server PSE (STRUST), and valid? (tls.certFile of system ${system} in erpHttp.yaml)`,
    { target: where },
  );

const codeOf = (error: unknown): string => String((error as { code?: string }).code);

/**
 * A request sent with a client certificate, a refusal of the certificate told from the ways a
 * connection fails: a TLS alert at once; a connection closed under the request (TLS 1.3) only when
 * `send` fails so again, on a fresh connection, as a reset from a load balancer or a restarting ICM
 * would not twice in a row. The second answer when it comes; the first failure when the failures
 * say nothing of the certificate.
 */
export async function sentWithCertificate<T>(
  send: () => Promise<T>,
  where: string,
  system: string,
  certFile: string,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (ALERT.test(codeOf(error))) throw refusal(codeOf(error), where, system, certFile);
    if (!CLOSED.test(codeOf(error))) throw error;
    try {
      return await send();
    } catch (second) {
      const code = codeOf(second);
      if (CLOSED.test(code) || ALERT.test(code)) throw refusal(code, where, system, certFile);
      throw error;
    }
  }
}

/**
 * A HEAD that failed otherwise: it writes nothing, so whatever became of it the system is
 * unavailable (never a document's uncertain call), or refusing when it is SAP's own certificate
 * that is not trusted.
 */
function unavailable(error: unknown, where: string, system: string): Connect2ErpError {
  const failure = networkFailure(error, where, system);
  return failure.scope === 'document' ? new SystemUnavailableError(failure.message, { target: where }) : failure;
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
async function certificateTaken(
  head: () => Promise<number>,
  where: string,
  system: string,
  certFile: string,
): Promise<void> {
  let status: number;
  try {
    status = await sentWithCertificate(head, where, system, certFile);
  } catch (error) {
    throw error instanceof CertificateRefusedError ? error : unavailable(error, where, system);
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

  /** `head`: a HEAD of the connection's address, answering its status; `where` names the connection. */
  constructor(
    private readonly head: () => Promise<number>,
    private readonly where: string,
    private readonly system: ErpSystemConfig,
  ) {}

  passed(): Promise<void> {
    const { head, where, system } = this;
    // A system signing in with a certificate has one: erp-schema.ts refuses one without.
    this.checked ??= certificateTaken(head, where, system.name, system.tls.certFile as string).catch(
      (error: unknown) => {
        if (!(error instanceof CertificateRefusedError)) this.checked = undefined;
        throw error;
      },
    );
    return this.checked;
  }
}
