import { z } from 'zod';
import { basicAuth, certificateAuth, httpUrl, proxySchema, timeoutsSchema, tlsSchema } from './common-schema.js';
import { placeholders, urlTemplate, valueSpec } from './call-schema.js';

/**
 * "Open in SAP": the address that shows a business object of one type, filled from the document's
 * values like a call's path (each placeholder percent-encoded), e.g. SAP GUI for HTML's
 * `…/sap/bc/gui/sap/its/webgui?~transaction=*MIR4%20RBKP-BELNR={u:BELNR};RBKP-GJAHR={u:GJAHR};DYNP_OKCODE=/00`
 * or a Fiori launchpad intent.
 */
const openInSap = z
  .strictObject({
    url: urlTemplate.refine((url) => /^https?:\/\/[^/{}]+/.test(url), {
      message: 'an absolute http(s) address whose host is written out, e.g. https://sap.example.com/…',
    }),
    values: z.record(z.string().regex(/^[A-Za-z_][\w]*$/, 'a name such as BELNR'), valueSpec),
  })
  .superRefine((open, ctx) => {
    for (const name of placeholders(open.url))
      if (!Object.hasOwn(open.values, name))
        ctx.addIssue({ code: 'custom', path: ['url'], message: `{${name}} is not one of the values` });
  });

/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4): the client authenticates at the token endpoint with
 * Basic (§2.3.1), or, without a secret, with the system's client certificate (`tls.certFile`; RFC
 * 8705 §2, tls_client_auth, as SAP BTP's XSUAA offers it), its id in the form.
 */
const oauth2 = z.strictObject({
  type: z.literal('oauth2'),
  tokenUrl: httpUrl,
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).optional(),
  scope: z.string().min(1).optional(),
});
export type OAuth2Config = z.infer<typeof oauth2>;

/**
 * The address a URL attachment in SAP points at (a Rest call's `documentUrl` values): `serve`, a
 * link `connect2erp serve` opens for `validityDays` without a sign-in, signed with `key` (which the
 * content server's connection of the same name lists among its `documentLinks.keys`); or `webui`,
 * the document in Nuxeo's Web UI at `url` (e.g. `https://ecm.example.com/nuxeo/ui`), opened with
 * the user's own sign-in and permissions.
 */
const documentLinks = z.discriminatedUnion('via', [
  z.strictObject({
    via: z.literal('serve'),
    /** The content server as SAP users' browsers reach it, e.g. `https://archivelink.example.com`. */
    url: httpUrl,
    key: z.string().min(32, 'at least 32 characters: a random key, e.g. `openssl rand -base64 32`'),
    validityDays: z.number().int().min(1).max(36_500).default(3_650),
  }),
  z.strictObject({ via: z.literal('webui'), url: httpUrl }),
]);
export type DocumentLinksConfig = z.infer<typeof documentLinks>;

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
        /** A user and password, or `{type: certificate}`: the client certificate of `tls`, mapped to a user in SAP. */
        auth: z.union([basicAuth, certificateAuth]),
        dateFormat: z.enum(['YYYY-MM-DD', 'YYYYMMDD']).default('YYYY-MM-DD'),
      })
      .optional(),
    /**
     * Gateway/OData host, e.g. `https://sap.example.com:44300`. `auth`: a user and password, or
     * OAuth 2.0 client credentials (a communication arrangement's; SAP's token endpoint
     * `/sap/bc/sec/oauth2/token`, or the BTP service's).
     */
    rest: z.strictObject({ url: httpUrl, auth: z.union([basicAuth, oauth2, certificateAuth]) }).optional(),
    tls: tlsSchema,
    timeouts: timeoutsSchema,
    /** For its rfc and rest connections both. */
    proxy: proxySchema,
    /**
     * Calls in flight to this system: the dialog work processes its administrators give the
     * connector (docs/operating.md, "Sizing"). It also sets how far a task reads ahead.
     */
    maxConcurrentCalls: z.number().int().min(1).max(64).default(8),
    /**
     * The calls in flight the SAP team agreed to for the whole connector, every pod at once
     * (docs/deploying.md, "Kubernetes"): `validate` and `run` warn when the pods running at once ×
     * `maxConcurrentCalls` exceed it. Without it, `maxConcurrentCalls` is taken as the agreement.
     */
    agreedCalls: z.number().int().min(1).optional(),
    /** Per business object type (erpCreateALDocument:erpObject, e.g. BUS2081): how a linked document's object is opened. */
    openInSap: z.record(z.string().regex(/^[A-Z0-9_/]+$/, 'an SAP object type such as BUS2081'), openInSap).optional(),
    documentLinks: documentLinks.optional(),
  })
  .refine((s) => s.rfc !== undefined || s.rest !== undefined, { message: 'needs an rfc or a rest connection' })
  .superRefine((s, ctx) => {
    const { auth } = s.rest ?? {};
    if (
      auth &&
      'type' in auth &&
      auth.type === 'oauth2' &&
      auth.clientSecret === undefined &&
      s.tls.certFile === undefined
    )
      ctx.addIssue({
        code: 'custom',
        path: ['rest', 'auth', 'clientSecret'],
        message:
          "the client's secret, or (without one) a client certificate in tls.certFile and tls.keyFile of the system",
      });
    for (const transport of ['rfc', 'rest'] as const)
      if (
        s[transport]?.auth &&
        'type' in s[transport].auth &&
        s[transport].auth.type === 'certificate' &&
        s.tls.certFile === undefined
      )
        ctx.addIssue({
          code: 'custom',
          path: [transport, 'auth'],
          message: 'signs in with a client certificate: give tls.certFile and tls.keyFile of the system',
        });
  });

/** `config/erpHttp.yaml`: the ERP systems, by name. */
export const erpSchema = z.strictObject({
  systems: z.array(system).min(1),
});

export type ErpConfig = z.infer<typeof erpSchema>;
export type ErpSystemConfig = ErpConfig['systems'][number];
