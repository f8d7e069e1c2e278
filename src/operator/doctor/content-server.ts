import { errorMessage } from '../../../common/errors.js';
import type { ContentServerConfig, ContentServerConnection } from '../../config/content-server-schema.js';
import type { StorageConfig } from '../../config/storage-schema.js';
import { CertificateStore, signsAt, type StoredCertificate } from '../../content-server/signatures/certificates.js';
import type { Logger } from '../../log.js';
import { RepositoryClient } from '../../repository/client.js';
import { Section } from './check.js';
import { getOnce } from './get-once.js';

const GUIDE = 'docs/sap-setup.md';

/**
 * Each connection of contentServer.yaml, called as SAP will call it: at `publicUrl` (what OAC0
 * names), `serverInfo` for its first content repository, which needs no signature. Without
 * `publicUrl` there is nothing to call: `serve` may run elsewhere.
 */
export async function checkContentServer(config: ContentServerConfig, timeoutMs: number): Promise<Section> {
  const section = new Section('content server');
  if (config.publicUrl === undefined) {
    section.skip('not called: contentServer.yaml has no publicUrl (the address OAC0 gives SAP)');
    return section;
  }
  for (const connection of config.connections) {
    const url = new URL(
      `${config.publicUrl.replace(/\/$/, '')}${config.pathPrefix}/${encodeURIComponent(connection.name)}`,
    );
    url.search = `serverInfo&pVersion=0047&contRep=${encodeURIComponent(connection.contentRepositories[0].contRep)}`;
    try {
      const statusCode = await getOnce(url, timeoutMs, async (answer) => {
        await answer.body.dump();
        return answer.statusCode;
      });
      if (statusCode === 200)
        section.pass(`connection ${connection.name} answers serverInfo at ${url.origin}${url.pathname}`);
      else
        section.fail(
          `connection ${connection.name} answered serverInfo with HTTP ${statusCode}`,
          `check that serve runs with this contentServer.yaml and that publicUrl reaches it (${GUIDE}, OAC0)`,
        );
    } catch (error) {
      section.fail(
        `connection ${connection.name} not reachable at ${url.origin}${url.pathname}: ${errorMessage(error)}`,
        'start connect2erp serve there, or fix publicUrl in contentServer.yaml',
      );
    }
  }
  return section;
}

/**
 * What `serve` needs of the repository, read with each connection's own account (repositoryAuth):
 * it signs in, each content repository's storagePath is there, and SAP's certificates are
 * approved (listed with the job's account, which reads adminPath). Read-only.
 */
export async function checkContentServerRepository(
  config: ContentServerConfig,
  storage: StorageConfig,
  log: Logger,
): Promise<Section> {
  const section = new Section('content server repository');
  const certificates = await new CertificateStore(new RepositoryClient(storage, log), storage.adminPath).list().then(
    (list) => list,
    (error: unknown) => {
      section.failed('certificates not readable', error, `give the job's account Read on ${storage.adminPath}`);
      return undefined;
    },
  );
  for (const connection of config.connections) {
    const client = new RepositoryClient({ ...storage, auth: connection.repositoryAuth, retries: 0 }, log);
    const signedIn = await client.me().then(
      (me) => {
        section.pass(`connection ${connection.name} signs in to the repository as ${me.id} (repositoryAuth)`);
        return true;
      },
      (error: unknown) => {
        section.failed(
          `connection ${connection.name} cannot sign in with repositoryAuth`,
          error,
          'fix repositoryAuth in contentServer.yaml: the content server\'s own account (docs/operating.md, "Content server")',
        );
        return false;
      },
    );
    if (!signedIn) continue;
    for (const { contRep, storagePath } of connection.contentRepositories)
      await section.attempt(
        `content repository ${contRep}: storagePath ${storagePath} not readable with repositoryAuth`,
        `create that folder and give ${connection.name}'s account ReadWrite on it`,
        async () => {
          await client.getByPath(storagePath);
          section.pass(`content repository ${contRep}: storagePath ${storagePath} found`);
        },
      );
    if (certificates !== undefined) checkCertificates(section, connection, certificates);
  }
  return section;
}

/** Whether each content repository has an approved certificate (unless signatures are off); the ones waiting are named. */
function checkCertificates(section: Section, connection: ContentServerConnection, all: StoredCertificate[]): void {
  const mine = all.filter((c) => c.connection === connection.name);
  const now = Date.now();
  for (const { contRep } of connection.contentRepositories) {
    const of = mine.filter((c) => c.contRep === contRep);
    // As serve counts them: an approved certificate that has expired signs nothing.
    const approved = of.filter((c) => signsAt(c, now)).length;
    const pending = of.filter((c) => c.status === 'pending').map((c) => c.name);
    const waiting = pending.length === 0 ? '' : `; waiting for approval: ${pending.join(', ')}`;
    if (approved > 0 || connection.signatures === 'off')
      section.pass(`content repository ${contRep}: ${approved} approved certificate(s)${waiting}`);
    else
      // Not yet a fault: SAP sends its certificate once OAC0 is set up, and an administrator approves it.
      section.skip(
        `content repository ${contRep}: no approved certificate yet, SAP's signed URLs are refused until one is${waiting}`,
        pending.length === 0
          ? 'send the certificate from OAC0 (Send certificate), then connect2erp certs approve NAME'
          : `check the fingerprint with SAP's (STRUST), then connect2erp certs approve ${pending[0]}`,
      );
  }
}
