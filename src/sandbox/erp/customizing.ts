import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';

const name = z.string().min(1);

/** The ERP sandbox's customizing file: what SAP would hold in OAC0, OAC2, OAC3, OAC5 and its user store. */
export const customizingSchema = z.strictObject({
  clients: z.array(z.string().regex(/^\d{3}$/)).min(1),
  users: z.record(name, z.strictObject({ password: name })),
  contentRepositories: z.array(name),
  documentTypes: z.record(name, name),
  links: z.record(name, z.array(name)),
  barcode: z.strictObject({ duplicates: z.boolean() }),
  agents: z.partialRecord(z.enum(['US', 'C', 'O', 'P', 'S', 'A']), z.array(name)),
});

export type Customizing = z.infer<typeof customizingSchema>;

export const DEFAULT_CUSTOMIZING = join(import.meta.dirname, '..', '..', '..', 'config', 'sandbox', 'sap-customizing.yaml');

export function loadCustomizing(path = DEFAULT_CUSTOMIZING): Customizing {
  return customizingSchema.parse(parse(readFileSync(path, 'utf8')));
}
