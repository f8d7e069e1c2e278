import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../common/errors.js';
import type { ErpSandbox } from './erp/server.js';
import type { Faults } from './faults.js';

/**
 * What an administrator rehearsing an outage sets on the sandboxes (`connect2erp sandbox --faults
 * FILE`), and what the tests set the same way: latency, the repository's search lag and maximum
 * page size, whether SAP's SOAP-RFC service is active, and faults per repository request (method
 * and a part of the path) or per function module: an error answer, a delay (a time-out), a dropped
 * connection, an answer lost after the work was done.
 */
const rule = z.strictObject({
  method: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
  path: z.string().optional(),
  functionName: z.string().optional(),
  times: z.number().int().positive().default(1),
  skip: z.number().int().min(0).optional(),
  status: z.number().int().min(100).max(599).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.string().optional(),
  delayMs: z.number().int().min(0).optional(),
  drop: z.boolean().optional(),
  loseAnswer: z.boolean().optional(),
  handleAfterDisconnect: z.boolean().optional(),
});

/**
 * A stock Nuxeo answers searches from Elasticsearch, which shows a commit after its refresh (about
 * a second; see repository/search-index.ts): the sandbox lags as much unless told otherwise.
 */
export const PRODUCTION_SEARCH_LAG_MS = 1000;

const side = { latencyMs: z.number().int().min(0).default(0), faults: z.array(rule).default([]) };

export const sandboxSettingsSchema = z.strictObject({
  repository: z
    .strictObject({
      ...side,
      searchLagMs: z.number().int().min(0).default(PRODUCTION_SEARCH_LAG_MS),
      maxPageSize: z.number().int().positive().default(1000),
      /** The LTS version it plays (`2021.40`, `2023.25`, `2025.15`): what `doctor` reads of the server. */
      version: z
        .string()
        .regex(/^\d+\.\d+(\.\d+)?$/, 'a version such as 2025.15')
        .default('2023.0'),
    })
    .prefault({}),
  erp: z
    .strictObject({ ...side, soapRfcActive: z.boolean().default(true), customizing: z.string().min(1).optional() })
    .prefault({}),
});

export type SandboxSettings = z.infer<typeof sandboxSettingsSchema>;

/** The settings file, every problem named with its key path; no file: the defaults. */
export function loadSandboxSettings(path: string | undefined): SandboxSettings {
  if (path === undefined) return sandboxSettingsSchema.parse({});
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new ConfigError([{ file: path, path: '', message: 'cannot read the file' }]);
  }
  const document = parseDocument(text);
  if (document.errors.length > 0)
    throw new ConfigError(
      document.errors.map((error) => ({ file: path, path: '', message: error.message.split('\n')[0] })),
    );
  const result = sandboxSettingsSchema.safeParse(document.toJS() ?? {});
  if (!result.success)
    throw new ConfigError(
      result.error.issues.map((issue) => ({ file: path, path: issue.path.join('.'), message: issue.message })),
    );
  return result.data;
}

function applyFaults(faults: Faults, settings: { latencyMs: number; faults: Array<z.infer<typeof rule>> }): void {
  faults.latencyMs = settings.latencyMs;
  for (const fault of settings.faults) faults.add(fault);
}

/** Latency, faults and the SICF switch onto running sandboxes; search lag and page size go to the repository sandbox's constructor. */
export function applySandboxSettings(settings: SandboxSettings, repository: { faults: Faults }, erp: ErpSandbox): void {
  applyFaults(repository.faults, settings.repository);
  applyFaults(erp.faults, settings.erp);
  erp.soapRfcActive = settings.erp.soapRfcActive;
}
