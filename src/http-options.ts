import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { basicAuth, timeoutsSchema, tlsSchema } from './config/common-schema.js';
import { registerSecret } from './log.js';

/** got options for the time-outs and TLS settings both connections share (repository and ERP). */
export function connectionOptions(config: { timeouts: z.infer<typeof timeoutsSchema>; tls: z.infer<typeof tlsSchema> }) {
  return {
    timeout: { connect: config.timeouts.connectMs, request: config.timeouts.requestMs },
    https: {
      rejectUnauthorized: config.tls.rejectUnauthorized,
      certificateAuthority: config.tls.caFile === undefined ? undefined : readFileSync(config.tls.caFile),
    },
  };
}

/** The `Authorization` header value for Basic auth; its encoded credentials are masked in logs like the password. */
export function basicAuthorization(auth: z.infer<typeof basicAuth>): string {
  const credentials = Buffer.from(`${auth.username}:${auth.password}`).toString('base64');
  registerSecret(credentials);
  return `Basic ${credentials}`;
}
