import { z } from 'zod';
import type { SchemaDef, SchemaRegistry } from '../../../common/nuxeo/schemas.js';
import { HTTP_CONTENT_FACET, HTTP_CONTENT_PROPERTIES } from '../../status/http-content.js';
import { missingValues, ORG_OBJECT_TYPES, USE_CASE_FACETS, WORKFLOW_START } from '../../status/readiness.js';
import type { UseCase } from '../../config/task-schema.js';
import { referenceOf } from './substitute.js';
import { fieldLimits, tooLongFor, tooLongText, type FieldLimit } from '../../config/field-limits.js';
import type { Config } from '../../config/load.js';
import { shortened } from '../../../common/quote.js';
import { didYouMean } from '../../did-you-mean.js';

export { HTTP_CONTENT_FACET };
export const WORKSPACES = '/default-domain/workspaces/';
/** Values the specification fixes (§2.3); anything else would break the ERP side. */
const FIXED: Record<string, unknown> = {
  'erpHttpContent:docId': '$id',
  'erpHttpContent:compId': 'data',
  'erpHttpContent:scanPerformed': false,
};

const value = z.union([z.string(), z.boolean(), z.number(), z.null()]);

/** `facets` is "a comma-separated list" in the spec's text and a JSON array in its example: both are read. */
const facetList = z.union([
  z.array(z.string().min(1)).min(1),
  z
    .string()
    .min(1)
    .transform((text) =>
      text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
]);

/** What a mapping file is checked against: the repository's schemas, the ERP systems, the SAP fields its values go to. */
export interface MappingRules {
  registry: SchemaRegistry;
  systems: readonly string[];
  limits: Map<string, FieldLimit[]>;
}

export const mappingRules = (config: Pick<Config, 'erp' | 'tasks'>, registry: SchemaRegistry): MappingRules => ({
  registry,
  systems: config.erp.systems.map((s) => s.name),
  limits: fieldLimits(config.tasks),
});

/**
 * The longest text a mapping file may give a property: the longest SAP field the built-in calls
 * fill takes 255 characters. A value is copied onto every document of its folder, into their
 * status and the reports: it is refused, not carried.
 */
const MAPPING_VALUE_MAX = 1_000;

export function mappingSchema(rules: MappingRules) {
  const entry = z
    .strictObject({
      path: z.string().refine((p) => p.startsWith(WORKSPACES) && p.length > WORKSPACES.length && !p.endsWith('/'), {
        message: `must be a folder path under ${WORKSPACES}, without a trailing slash`,
      }),
      facets: facetList,
      createParentALFolder: z.boolean(),
      properties: z.record(z.string(), value),
      /** The use-case values end users may change on the ERP tab (src/status/user-input.ts). */
      userInput: z.array(z.string().min(1)).optional(),
    })
    // Also when `path` or the flag is wrong, so that one run reports every problem of the entry.
    .superRefine((e, ctx) => checkEntry(e, ctx, rules), {
      when: (payload) => CROSS_CHECKABLE.safeParse(payload.value).success,
    });
  return z
    .strictObject(
      { mapping: z.array(entry, { error: EXPECTED }).min(1) },
      { error: (issue) => (issue.code === 'invalid_type' ? EXPECTED : undefined) },
    )
    .superRefine(
      (file, ctx) => {
        // Every entry of a path mapped twice is left out: which one was meant, only its author knows.
        // Counted over every entry with a path, whatever else is wrong with it or its neighbours.
        const paths = (file.mapping as unknown[]).map((e) => PATHED.safeParse(e).data?.path);
        const count = new Map<string, number>();
        for (const path of paths) if (path !== undefined) count.set(path, (count.get(path) ?? 0) + 1);
        paths.forEach((path, i) => {
          const times = path === undefined ? 0 : (count.get(path) as number);
          if (times > 1)
            ctx.addIssue({
              code: 'custom',
              path: ['mapping', i, 'path'],
              message: `${path} is mapped ${times} times: every entry for it is left out until one remains`,
            });
        });
      },
      { when: (payload) => LISTED.safeParse(payload.value).success },
    );
}

const EXPECTED = 'must be a JSON object with a list of entries: {"mapping": [{"path": …, "facets": …, …}]}';

/** What the cross-field checks read: they run as soon as these parts are well-formed. */
const CROSS_CHECKABLE = z.object({
  facets: z.array(z.string()),
  properties: z.record(z.string(), value),
  userInput: z.array(z.string()).optional(),
});
const LISTED = z.object({ mapping: z.array(z.unknown()) });
/** An entry's folder, when it gives one as text. */
export const PATHED = z.object({ path: z.string() });

type Ctx = z.RefinementCtx;
interface Entry {
  facets: string[];
  properties: Record<string, string | boolean | number | null>;
  userInput?: string[];
}

function checkEntry(entry: Entry, ctx: Ctx, rules: MappingRules): void {
  const { registry, systems } = rules;
  const known = [HTTP_CONTENT_FACET, ...Object.values(USE_CASE_FACETS)];
  entry.facets.forEach((facet, i) => {
    if (!known.includes(facet))
      ctx.addIssue({ code: 'custom', path: ['facets', i], message: `unknown facet ${facet}; use ${known.join(', ')}` });
  });
  if (!entry.facets.includes(HTTP_CONTENT_FACET))
    ctx.addIssue({ code: 'custom', path: ['facets'], message: `must contain ${HTTP_CONTENT_FACET}` });
  const useCases = entry.facets.filter((f) => f !== HTTP_CONTENT_FACET && known.includes(f));
  if (useCases.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['facets'],
      message: `needs exactly one use-case facet (${Object.values(USE_CASE_FACETS).join(', ')})`,
    });
  }
  for (const key of HTTP_CONTENT_PROPERTIES) {
    if (!(key in entry.properties))
      ctx.addIssue({ code: 'custom', path: ['properties'], message: `${key} is required` });
  }
  for (const [key, fixed] of Object.entries(FIXED)) {
    if (key in entry.properties && entry.properties[key] !== fixed) {
      ctx.addIssue({ code: 'custom', path: ['properties', key], message: `must be ${JSON.stringify(fixed)}` });
    }
  }
  const source = entry.properties['erpHttpContent:source'];
  if (typeof source === 'string' && !source.startsWith('$') && !systems.includes(source)) {
    ctx.addIssue({
      code: 'custom',
      path: ['properties', 'erpHttpContent:source'],
      message: `"${source}" is not an ERP system of erpHttp.yaml (${systems.join(', ')})`,
    });
  }
  const allowedSchemas = entry.facets.flatMap((f) => registry.facets.get(f) ?? []);
  const useCase = useCases.length === 1 ? useCaseOf(entry) : undefined;
  for (const [key, v] of Object.entries(entry.properties)) {
    checkProperty(key, v, ctx, registry, allowedSchemas);
    if (typeof v === 'string') checkLength(key, v, ctx, rules.limits, useCase);
  }
  if (useCase !== undefined && entry.userInput !== undefined)
    checkUserInput(entry, entry.userInput, useCase, ctx, registry);
}

/**
 * The values users may change are the use case's own (the ERP tab shows no others), and with the
 * entry's values they make a document ready: else its documents would wait for what no one may enter.
 */
function checkUserInput(entry: Entry, userInput: string[], useCase: UseCase, ctx: Ctx, registry: SchemaRegistry): void {
  const own = propertiesOf(registry, registry.facets.get(USE_CASE_FACETS[useCase]) as string[]);
  userInput.forEach((key, i) => {
    if (!own.includes(key))
      ctx.addIssue({
        code: 'custom',
        path: ['userInput', i],
        message: `not a value of ${USE_CASE_FACETS[useCase]}${didYouMean(key, own)}; users may change ${own.join(', ')}`,
      });
  });
  // What a user could enter: the switch on, an agent type of the six, any text.
  const entered = (key: string): unknown =>
    key === WORKFLOW_START ? true : key === 'erpStartWorkflow:erpOTyp' ? ORG_OBJECT_TYPES[0] : 'a value';
  const filled = Object.fromEntries(userInput.map((key) => [key, entered(key)]));
  const given = Object.fromEntries(Object.entries(entry.properties).filter(([key]) => !userInput.includes(key)));
  const waiting = missingValues(useCase, given, filled);
  if (waiting.length > 0)
    ctx.addIssue({
      code: 'custom',
      path: ['userInput'],
      message: `its documents would wait for ${waiting.join(', ')}, which this entry neither sets nor lets users enter: give a value or list it here`,
    });
}

/** The properties of the entry's facets, as a mapping file names them (`prefix:field`). */
function propertiesOf(registry: SchemaRegistry, allowedSchemas: string[]): string[] {
  return allowedSchemas.flatMap((name) => {
    const schema = registry.schemas.get(name) as SchemaDef;
    return [...schema.fields.keys()].map((field) => `${schema.prefix}:${field}`);
  });
}

/** The JSON type a mapping value must have for a field type; dates and strings are text. */
const JSON_TYPES: Record<string, string> = { boolean: 'boolean', long: 'number', double: 'number' };

function checkProperty(
  key: string,
  v: string | boolean | number | null,
  ctx: Ctx,
  registry: SchemaRegistry,
  allowedSchemas: string[],
): void {
  const path = ['properties', key];
  const prop = registry.property(key);
  if (prop === undefined)
    return ctx.addIssue({
      code: 'custom',
      path,
      message: `unknown property${didYouMean(key, propertiesOf(registry, allowedSchemas))}`,
    });
  if (!allowedSchemas.includes(prop.schema.name)) {
    const facet = [...registry.facets].find(([, schemas]) => schemas.includes(prop.schema.name))?.[0];
    return ctx.addIssue({ code: 'custom', path, message: `belongs to facet ${facet}, which this entry does not list` });
  }
  if (typeof v === 'string' && v.startsWith('$') && !v.startsWith('$$')) return checkReference(v, ctx, path, registry);
  const expected = JSON_TYPES[prop.field.type] ?? 'string';
  if (v !== null && typeof v !== expected)
    return ctx.addIssue({ code: 'custom', path, message: `must be a ${expected} or a $ reference` });
  if (key === 'erpStartWorkflow:erpOTyp' && typeof v === 'string' && !ORG_OBJECT_TYPES.includes(v)) {
    ctx.addIssue({ code: 'custom', path, message: `must be one of ${ORG_OBJECT_TYPES.join(', ')}` });
  }
}

/**
 * A text no longer than MAPPING_VALUE_MAX, and no longer than the SAP fields of the entry's use
 * case it goes to (a `$` reference is checked on each document, when it is read).
 */
function checkLength(
  key: string,
  v: string,
  ctx: Ctx,
  limits: Map<string, FieldLimit[]>,
  useCase: UseCase | undefined,
): void {
  const path = ['properties', key];
  if (v.startsWith('$') && !v.startsWith('$$') && v.length <= MAPPING_VALUE_MAX) return;
  const text = v.startsWith('$$') ? v.slice(1) : v;
  const limit = useCase === undefined ? undefined : tooLongFor(limits, key, useCase, text);
  if (limit !== undefined)
    ctx.addIssue({
      code: 'custom',
      path,
      message: tooLongText(text, limit),
    });
  else if (v.length > MAPPING_VALUE_MAX)
    ctx.addIssue({
      code: 'custom',
      path,
      message: `"${shortened(v)}" is longer than the ${MAPPING_VALUE_MAX} characters a mapping value may have`,
    });
}

/**
 * A `$` value names a property of the uploaded document (spec §2.2). One of a schema the program
 * knows (Nuxeo's stock schemas and the feature's) must be a field of it: a misspelt `$dc:creatd`
 * would otherwise make every matching document an intake error. A schema of the customer's own
 * is not known here and passes.
 */
function checkReference(v: string, ctx: Ctx, path: string[], registry: SchemaRegistry): void {
  const reference = referenceOf(v);
  if (reference === undefined) return;
  const [property] = reference.split(/[./]/);
  const colon = property.indexOf(':');
  if (colon < 0) {
    ctx.addIssue({ code: 'custom', path, message: `${shortened(v)}: a $ value is $id or $<prefix:field>` });
    return;
  }
  const schema = registry.byPrefix.get(property.slice(0, colon));
  if (schema !== undefined && registry.property(property) === undefined)
    ctx.addIssue({
      code: 'custom',
      path,
      message: `${shortened(v)}: schema ${schema.name} has no field ${property.slice(colon + 1)}`,
    });
}

export type MappingFile = z.infer<ReturnType<typeof mappingSchema>>;
export type MappingEntry = MappingFile['mapping'][number];

/** The use case of an entry's one use-case facet. */
export function useCaseOf(entry: Pick<MappingEntry, 'facets'>): UseCase {
  const found = Object.entries(USE_CASE_FACETS).find(([, facet]) => entry.facets.includes(facet));
  return (found as [UseCase, string])[0];
}
