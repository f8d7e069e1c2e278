import { Cron } from 'croner';
import { z } from 'zod';
import { parseCondition } from '../nxql/parse.js';
import { errorMessage } from '../errors.js';

export const USE_CASES = ['link', 'barcode', 'workflow'] as const;
export type UseCase = (typeof USE_CASES)[number];

const cron = z.string().superRefine((text, ctx) => {
  try {
    new Cron(text, { paused: true });
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `not a cron expression: ${errorMessage(error)}` });
  }
});

const nxqlCondition = z.string().superRefine((text, ctx) => {
  try {
    parseCondition(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `not an NXQL condition: ${errorMessage(error)}` });
  }
});

/** `jobs/<task>.yaml`: one task per use case (spec §1, rule 3). */
export const taskSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes'),
  useCase: z.enum(USE_CASES),
  enabled: z.boolean().default(true),
  function: z.enum(['RFC', 'Rest']),
  schedule: cron,
  /** Only documents whose `erpHttpContent:source` is one of these; all systems when absent. */
  systems: z.array(z.string().min(1)).min(1).optional(),
  /** Extra NXQL condition ANDed to the query the job builds. */
  filter: nxqlCondition.optional(),
  batchSize: z.number().int().min(1).max(1000).default(50),
  concurrency: z.number().int().min(1).max(64).default(4),
  attempts: z.number().int().min(1).max(100).default(5),
  backoff: z
    .strictObject({
      initialMs: z.number().int().positive().default(60_000),
      factor: z.number().min(1).default(2),
      maxMs: z.number().int().positive().default(3_600_000),
    })
    .prefault({}),
  claimTimeoutMs: z.number().int().positive().default(900_000),
});

export type TaskConfig = z.infer<typeof taskSchema>;
