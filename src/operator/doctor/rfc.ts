import type { RfcRequest } from '../../erp/rfc-client.js';

/** What the ERP checks send: one call, its answer or its typed failure. */
export interface DoctorRfc {
  send(request: RfcRequest): Promise<Record<string, unknown>>;
}
