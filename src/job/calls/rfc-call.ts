import type { RfcCallConfig, RfcLookupStep } from '../../config/call-schema.js';
import { DocumentError } from '../../../common/errors.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import { RfcFault } from '../../erp/rfc-fault.js';
import { notInXml } from '../../erp/soap.js';
import { ConditionTooLong, readTableRequest, readTableRows } from '../../erp/read-table.js';
import { buildParameters, fill, type DateFormat, type MappedValue } from './values.js';
import { foundIn, type CallAdapter } from './execute.js';

/** What one lookup step finds: a function module's table read back (empty tables are sent so they come back), or a row of a table. */
async function lookUpStep(erp: ErpPort<RfcRequest>, step: RfcLookupStep, values: MappedValue[]): Promise<unknown> {
  if ('table' in step) {
    const where = Object.fromEntries(Object.entries(step.where).map(([field, v]) => [field, fill(v, values)]));
    let request: RfcRequest;
    try {
      request = readTableRequest(step.table, Object.keys(where).slice(0, 1), where);
    } catch (error) {
      // The one thing the request can fail on: a condition longer than a WHERE row.
      throw new DocumentError((error as ConditionTooLong).message, { target: step.table });
    }
    return readTableRows(await erp.read(request))[0];
  }
  const params = Object.fromEntries(Object.entries(step.parameters).map(([k, v]) => [k, fill(v, values)]));
  try {
    const answer = await erp.read({ functionName: step.function, params: { ...params, [step.found.list]: [] } });
    return foundIn(answer, step.found, values);
  } catch (error) {
    if (error instanceof RfcFault && error.fault.exception === step.notFound) return undefined;
    throw error;
  }
}

/** A function module call over SOAP-RFC; its lookup asks each step in turn until one finds the work. */
export function rfcCall(config: RfcCallConfig, erp: ErpPort<RfcRequest>, dateFormat: DateFormat): CallAdapter {
  const { lookup } = config;
  return {
    config,
    dateFormat,
    name: config.function,
    unsendable: (value) => {
      const character = notInXml(value);
      return character && `holds a control character (${character}) that a SOAP-RFC call cannot carry (XML 1.0)`;
    },
    lookup:
      lookup &&
      (async (values) => {
        for (const step of lookup) {
          const found = await lookUpStep(erp, step, values);
          if (found !== undefined) return found;
        }
        return undefined;
      }),
    send: (documents) =>
      erp.write({ functionName: config.function, params: buildParameters(documents.map((d) => d.values)) }),
    alreadyDone: (error) => error instanceof RfcFault && config.alreadyDone.includes(error.messageKey),
    probe: () => erp.read({ functionName: 'RFC_PING', params: {} }),
  };
}
