import type { RfcClient } from './rfc-client.js';
import type { RfcParams } from './soap.js';

/**
 * Every call the job makes to the ERP. Reads (lookups) always go out; writes (links,
 * bar codes, work items) are one switch away from a dry run, which only records them.
 */
export interface ErpPort {
  read(functionName: string, params: RfcParams): Promise<Record<string, unknown>>;
  write(functionName: string, params: RfcParams): Promise<Record<string, unknown>>;
}

export function liveErp(rfc: RfcClient): ErpPort {
  return { read: (fn, params) => rfc.call(fn, params), write: (fn, params) => rfc.call(fn, params) };
}

export interface PlannedCall {
  system: string;
  functionName: string;
  params: RfcParams;
}

export function dryRunErp(rfc: RfcClient, planned: PlannedCall[]): ErpPort {
  return {
    read: (fn, params) => rfc.call(fn, params),
    write: async (functionName, params) => {
      planned.push({ system: rfc.system.name, functionName, params });
      return {};
    },
  };
}
