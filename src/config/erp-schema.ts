import { z } from 'zod';
import { basicAuth, httpUrl, timeoutsSchema, tlsSchema } from './common-schema.js';

const system = z
  .strictObject({
    /** The value documents carry in `erpHttpContent:source`. */
    name: z.string().min(1),
    client: z.string().regex(/^\d{3}$/, 'must be a three-digit SAP client, e.g. "100"'),
    language: z.string().length(2).optional(),
    /**
     * SOAP-RFC service, e.g. `https://sap.example.com:44300/sap/bc/soap/rfc`. `dateFormat`: how a
     * date (ABAP type D) goes out; SAP's SOAP runtime reads them as asXML writes them, YYYY-MM-DD.
     */
    rfc: z
      .strictObject({
        url: httpUrl,
        auth: basicAuth,
        dateFormat: z.enum(['YYYY-MM-DD', 'YYYYMMDD']).default('YYYY-MM-DD'),
      })
      .optional(),
    /** Gateway/OData host, e.g. `https://sap.example.com:44300`. */
    rest: z.strictObject({ url: httpUrl, auth: basicAuth }).optional(),
    tls: tlsSchema,
    timeouts: timeoutsSchema,
    /**
     * Calls in flight to this system: the dialog work processes its administrators give the
     * connector (docs/operating.md, "Sizing"). It also sets how far a task reads ahead.
     */
    maxConcurrentCalls: z.number().int().min(1).max(64).default(8),
  })
  .refine((s) => s.rfc !== undefined || s.rest !== undefined, { message: 'needs an rfc or a rest connection' });

/** `config/erpHttp.yaml`: the ERP systems, by name. */
export const erpSchema = z.strictObject({
  systems: z.array(system).min(1),
});

export type ErpConfig = z.infer<typeof erpSchema>;
export type ErpSystemConfig = ErpConfig['systems'][number];
