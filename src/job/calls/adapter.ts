import { systemClock } from '../../clock.js';
import type { ErpSystemConfig } from '../../config/erp-schema.js';
import type { TaskCall } from '../../config/templates.js';
import type { RestRequest, UploadContent } from '../../erp/rest-client.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RepositoryReader } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { ErpPorts } from '../lanes/context.js';
import type { CallAdapter } from './execute.js';
import { restCall } from './rest-call.js';
import { rfcCall } from './rfc-call.js';
import { documentUrls } from './document-url.js';
import type { DateFormat } from './values.js';

/**
 * A task's call to one SAP system, over the port of its transport: what a lane sends with and
 * what `reconcile` looks documents up with. A Rest upload's file streams from the repository to
 * SAP, so memory does not grow with its size. `now` dates the links of `documentLinks`.
 */
export function callAdapter(
  call: TaskCall,
  system: ErpSystemConfig,
  erpFor: <T extends keyof ErpPorts>(system: string, transport: T) => ErpPorts[T] | undefined,
  client: Pick<RepositoryReader, 'openBlob'>,
  now: () => Date = systemClock,
): CallAdapter {
  const urls = documentUrls(system.name, system.documentLinks, now);
  if (call.transport === 'RFC') {
    const { dateFormat } = system.rfc as { dateFormat: DateFormat };
    return { ...rfcCall(call.call, erpFor(system.name, 'RFC') as ErpPort<RfcRequest>, dateFormat), urls };
  }
  const content = async (doc: RepositoryDocument): Promise<UploadContent> => {
    const answer = await client.openBlob(doc.uid);
    // Only set-cookie comes as a list.
    return { stream: answer.body, length: answer.headers['content-length'] as string | undefined };
  };
  return { ...restCall(call.call, erpFor(system.name, 'Rest') as ErpPort<RestRequest>, content), urls };
}
