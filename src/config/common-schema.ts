import { z } from 'zod';

/** Pieces shared by the repository and ERP connection schemas. */
export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

export const basicAuth = z.strictObject({
  username: z.string().min(1),
  password: z.string().min(1),
});

export const tlsSchema = z
  .strictObject({
    /** Verification stays on unless a user turns it off explicitly. */
    rejectUnauthorized: z.boolean().default(true),
    /** PEM file with extra trusted certificates (a private CA). */
    caFile: z.string().min(1).optional(),
  })
  .prefault({});

export const timeoutsSchema = z
  .strictObject({
    connectMs: z.number().int().positive().default(5_000),
    requestMs: z.number().int().positive().default(30_000),
  })
  .prefault({});
