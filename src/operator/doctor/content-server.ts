import { request } from 'undici';
import { errorMessage } from '../../../common/errors.js';
import type { ContentServerConfig } from '../../config/content-server-schema.js';
import { Section } from './check.js';

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
      const answer = await request(url, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      await answer.body.dump();
      if (answer.statusCode === 200)
        section.pass(`connection ${connection.name} answers serverInfo at ${url.origin}${url.pathname}`);
      else
        section.fail(
          `connection ${connection.name} answered serverInfo with HTTP ${answer.statusCode}`,
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
