import type { RfcCallConfig } from '../../../config/call-schema.js';
import type { ErpPort } from '../../../ports/erp-port.js';
import type { RfcRequest } from '../../../erp/rfc-client.js';
import { RfcFault } from '../../../erp/rfc-fault.js';
import { buildParameters, fill, type DateFormat } from '../mapping.js';
import { foundIn, type CallAdapter } from './execute.js';

/** A function module call over SOAP-RFC; the lookup reads a table (empty tables are sent so they come back). */
export function rfcCall(config: RfcCallConfig, erp: ErpPort<RfcRequest>, dateFormat: DateFormat): CallAdapter {
  const { lookup } = config;
  return {
    config,
    dateFormat,
    name: config.function,
    lookup:
      lookup &&
      (async (values) => {
        const params = Object.fromEntries(Object.entries(lookup.parameters).map(([k, v]) => [k, fill(v, values)]));
        try {
          const answer = await erp.read({
            functionName: lookup.function,
            params: { ...params, [lookup.found.list]: [] },
          });
          return foundIn(answer, lookup.found, values);
        } catch (error) {
          if (error instanceof RfcFault && error.fault.exception === lookup.notFound) return undefined;
          throw error;
        }
      }),
    send: (documents) =>
      erp.write({ functionName: config.function, params: buildParameters(documents.map((d) => d.values)) }),
    alreadyDone: (error) => error instanceof RfcFault && config.alreadyDone.includes(error.messageKey),
  };
}
