import { Cron } from 'croner';
import { z } from 'zod';
import { callProblems, readProblems, readSchema, restCallSchema, rfcCallSchema } from './call-schema.js';
import { parseCondition } from '../../common/nxql/parse.js';
import { errorMessage } from '../../common/errors.js';

const USE_CASES = ['link', 'barcode', 'workflow'] as const;
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
export const taskSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes'),
    useCase: z.enum(USE_CASES),
    enabled: z.boolean().default(true),
    function: z.enum(['RFC', 'Rest']),
    schedule: cron,
    /** Only documents whose `erpHttpContent:source` is one of these; all systems when absent. */
    systems: z.array(z.string().min(1)).min(1).optional(),
    /** Extra NXQL condition ANDed to the query the job builds. */
    filter: nxqlCondition.optional(),
    /** Documents per page read, and per call when the call takes a table (bar codes). */
    batchSize: z.number().int().min(1).max(1000).default(50),
    /**
     * No longer used: a task reads ahead as far as its systems' `maxConcurrentCalls` need. Still
     * read, so that files written for earlier versions load; `validate` and `run` say to remove it.
     */
    concurrency: z.number().int().min(1).max(8).optional(),
    attempts: z.number().int().min(1).max(100).default(5),
    backoff: z
      .strictObject({
        initialMs: z.number().int().positive().default(60_000),
        factor: z.number().min(1).default(2),
        maxMs: z.number().int().positive().default(3_600_000),
      })
      .prefault({}),
    claimTimeoutMs: z.number().int().positive().default(900_000),
    /** The call, when not the built-in template for the use case (`connect2erp template`). */
    rfc: rfcCallSchema.optional(),
    rest: restCallSchema.optional(),
    /** SAP's data about the business object, written onto the document once it is linked. */
    read: readSchema.optional(),
  })
  .superRefine((task, ctx) => {
    if (task.read !== undefined && task.useCase !== 'link')
      ctx.addIssue({
        code: 'custom',
        path: ['read'],
        message: "only a link names the business object whose data SAP gives: declare read in the link task's file",
      });
    if (task.read !== undefined)
      for (const problem of readProblems(task.read, task.function))
        ctx.addIssue({ code: 'custom', path: ['read', ...problem.path], message: problem.message });
    const own = task.function === 'RFC' ? 'rfc' : 'rest';
    const other = own === 'rfc' ? 'rest' : 'rfc';
    if (task[other] !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [other],
        message: `function is ${task.function}: declare the call under ${own}`,
      });
    const call = task[own];
    if (call === undefined) {
      // Of the Rest calls, only the link's has a built-in template (templates.ts).
      if (task.function === 'Rest' && task.useCase !== 'link') {
        ctx.addIssue({
          code: 'custom',
          path: [own],
          message: `SAP offers no standard REST service for ${task.useCase === 'barcode' ? 'bar codes' : 'workflow starts'}: declare the call under ${own}, or use function: RFC`,
        });
      }
      return;
    }
    for (const problem of callProblems(call))
      ctx.addIssue({ code: 'custom', path: [own, ...problem.path], message: problem.message });
    if (task.useCase === 'link' && call.lookup === undefined && call.repeatable) {
      ctx.addIssue({
        code: 'custom',
        path: [own, 'repeatable'],
        message:
          'a link call sent again without a lookup links the document twice: give it a lookup, or leave it not repeatable',
      });
    }
  });

export type TaskConfig = z.infer<typeof taskSchema>;
