import type { RestCallConfig } from '../../config/call-schema.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RestRequest, UploadContent } from '../../erp/rest-client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { buildParameters, fill } from './values.js';
import { foundIn, type CallAdapter, type MappedDocument } from './execute.js';

/** A declared HTTP call; `content` streams nothing until SAP is really written to (never in a dry run). */
export function restCall(
  config: RestCallConfig,
  erp: ErpPort<RestRequest>,
  content: (doc: RepositoryDocument) => Promise<UploadContent>,
): CallAdapter {
  const { lookup } = config;
  const body = (documents: MappedDocument[]): RestRequest['body'] => {
    if (config.body === 'parameters') return { json: buildParameters(documents.map((d) => d.values)) };
    return config.body === 'content' ? { content: () => content(documents[0].doc) } : undefined;
  };
  return {
    config,
    dateFormat: 'YYYY-MM-DD',
    name: `${config.method} ${config.service}${config.path}`,
    lookup:
      lookup &&
      (async (values) => {
        const answer = await erp.read({
          method: 'GET',
          service: config.service,
          path: fill(lookup.path, values),
          headers: {},
          csrf: config.csrf,
        });
        return foundIn(answer, lookup.found, values);
      }),
    send: (documents) => {
      const values = documents[0].values;
      const headers = Object.fromEntries(
        Object.entries(config.headers)
          .map(([k, v]) => [k, fill(v, values)])
          .filter(([, v]) => v !== ''),
      );
      return erp.write({
        method: config.method,
        service: config.service,
        path: fill(config.path, values),
        headers,
        body: body(documents),
        csrf: config.csrf,
      });
    },
    alreadyDone: () => false,
    // The service document: a read the service answers whatever the business objects.
    probe: () => erp.read({ method: 'GET', service: config.service, path: '/', headers: {}, csrf: false }),
  };
}
