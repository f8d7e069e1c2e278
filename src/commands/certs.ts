import { ConfigError } from '../../common/errors.js';
import { loadContentServerConfig } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import {
  CertificateStore,
  type CertificateStatus,
  type StoredCertificate,
} from '../content-server/signatures/certificates.js';
import { EXIT } from '../exit-codes.js';
import { commandLogger } from '../log.js';
import { administratorAccount, refusedTo } from '../operator/administrator.js';
import { RepositoryClient } from '../repository/client.js';
import { CONFIG_ONLY, location, type Command, OPERATOR_EXITS } from './command.js';

const ACTIONS: Record<string, CertificateStatus | undefined> = {
  list: undefined,
  approve: 'approved',
  revoke: 'revoked',
};

function render(certificates: StoredCertificate[]): string {
  if (certificates.length === 0)
    return 'no certificate filed yet (SAP sends its own with putCert: OAC0, "Send certificate")';
  return certificates
    .map((c) =>
      [
        `${c.name}  ${c.status.toUpperCase()}`,
        `  connection ${c.connection}, content repository ${c.contRep}, authId ${c.authId}`,
        `  subject ${c.subject}`,
        `  SHA-256 ${c.fingerprint}`,
        `  valid until ${c.notAfter}, received ${c.receivedAt}`,
      ].join('\n'),
    )
    .join('\n\n');
}

/** The certificate a name or a fingerprint (at least 8 characters of it) designates; exactly one. */
function designated(certificates: StoredCertificate[], key: string | undefined, action: string): StoredCertificate {
  const problem = (message: string): ConfigError => new ConfigError([{ file: 'command line', path: action, message }]);
  if (key === undefined)
    throw problem('name the certificate: its name or its SHA-256 fingerprint (connect2erp certs list)');
  const wanted = key.replace(/:/g, '').toUpperCase();
  const found = certificates.filter((c) => c.name === key || (wanted.length >= 8 && c.fingerprint.startsWith(wanted)));
  if (found.length === 0) throw problem(`no certificate named or with a fingerprint starting "${key}"`);
  if (found.length > 1) throw problem(`"${key}" designates ${found.length} certificates; give more of the fingerprint`);
  return found[0];
}

/** `connect2erp certs list|approve|revoke`: the administrator's side of putCert. */
async function certsCommand(
  location: Required<ConfigLocation>,
  action: string | undefined,
  key: string | undefined,
): Promise<number> {
  if (action === undefined || !Object.hasOwn(ACTIONS, action))
    throw new ConfigError([{ file: 'command line', path: 'certs', message: 'say list, approve NAME or revoke NAME' }]);
  const config = loadContentServerConfig(location);
  const log = commandLogger();
  const { storage, who } = administratorAccount(config.storage);
  const store = new CertificateStore(new RepositoryClient(storage, log), storage.adminPath);
  const certificates = await store.list();
  const status = ACTIONS[action];
  if (status === undefined) {
    process.stdout.write(`${render(certificates)}\n`);
    return EXIT.ok;
  }
  const certificate = designated(certificates, key, action);
  await store.setStatus(certificate, status).catch(refusedTo(who, `certs ${action}`, "change SAP's certificates"));
  log.warn('certificate decided', {
    status,
    by: who,
    name: certificate.name,
    authId: certificate.authId,
    fingerprint: certificate.fingerprint,
  });
  process.stdout.write(
    `${certificate.name} is ${status} (replicas of serve see it within certificateRefreshSeconds)\n`,
  );
  return EXIT.ok;
}

export const command: Command = {
  exits: { ...OPERATOR_EXITS, 2: 'configuration or usage error, or the account may not decide' },
  args: 'list | approve NAME | revoke NAME',
  options: { ...CONFIG_ONLY },
  run: ({ positionals, strings }) => certsCommand(location(strings), positionals[1], positionals[2]),
};
