import { z } from 'zod';

/**
 * How a task turns a document into an ERP call, declared in YAML and never evaluated:
 * values come from repository properties or constants, pass through named transforms and
 * are checked against their ABAP field length; templates only substitute `{name}` placeholders.
 */

const TRANSFORM_NAMES = ['date', 'flag', 'upper', 'trim'] as const;

const transform = z.union([
  z.enum(TRANSFORM_NAMES),
  z.strictObject({
    pad: z.strictObject({
      length: z.number().int().positive(),
      with: z.string().length(1).default('0'),
      side: z.enum(['left', 'right']).default('left'),
    }),
  }),
  z.strictObject({
    substring: z.strictObject({ start: z.number().int().min(0), length: z.number().int().positive().optional() }),
  }),
  /** A value looked up in a table (a MIME type to SAP's document class, say); a value the table lacks is refused. */
  z.strictObject({
    map: z
      .record(z.string(), z.string())
      .refine((table) => Object.keys(table).length > 0, { message: 'map at least one value' }),
  }),
]);
export type Transform = z.infer<typeof transform>;

/** `prefix:name`, or a field inside a complex one: `file:content.name`. */
const propertyName = z
  .string()
  .regex(/^[A-Za-z][\w-]*:[\w-]+(\.[\w-]+)*$/, 'a repository property such as erpBarcode:barcode');

export const valueSpec = z
  .strictObject({
    property: propertyName.optional(),
    constant: z.union([z.string(), z.number(), z.boolean()]).optional(),
    /**
     * The document's address for a URL attachment, as its system's `documentLinks` make it: `open`,
     * the link SAP users follow (signed, with its expiry, for serve); `stable`, the part of it that
     * is the same at every attempt, to find the attachment again after a lost answer.
     */
    documentUrl: z.enum(['open', 'stable']).optional(),
    transform: z.array(transform).default([]),
    /** The ABAP field length: a longer value is refused before the call. */
    length: z.number().int().positive().optional(),
  })
  .refine((v) => [v.property, v.constant, v.documentUrl].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of property, constant or documentUrl',
  });
export type ValueSpec = z.infer<typeof valueSpec>;

/**
 * Where a value goes: `NAME` (import parameter), `STRUCT.FIELD` (structure field),
 * `TABLE[].FIELD` (a column, one row per document: the documents of a batch share one call)
 * or `TABLE[n].FIELD` (a fixed row; a row with no value from the document is left out).
 */
export const TARGET = /^([A-Za-z_/][\w/]*)(?:\[(\d*)\])?(?:\.([A-Za-z_/][\w/]*))?$/;
const target = z.string().regex(TARGET, 'NAME, STRUCT.FIELD, TABLE[].FIELD or TABLE[n].FIELD');

const parameters = z
  .record(target, valueSpec)
  .refine((p) => Object.keys(p).length > 0, { message: 'map at least one parameter' });

/**
 * `{NAME}`, `{q:NAME}` (an OData string literal, URL-encoded), `{u:NAME}` (URL-encoded) or
 * `{response.path}`; `{A|B}` takes the first that is not blank.
 */
export const PLACEHOLDER = /\{(?:([qu]):)?([^{}]+)\}/g;
const template = z.string();

/**
 * A template that becomes part of a URL: a value placed raw could add a path segment, a query
 * parameter or an OData operator (`x' or 1 eq 1`), so every placeholder says how it is quoted.
 */
export const urlTemplate = z.string().superRefine((text, ctx) => {
  for (const [placeholder, encoding] of text.matchAll(PLACEHOLDER)) {
    if (encoding === undefined)
      ctx.addIssue({
        code: 'custom',
        message: `${placeholder} would put a value into the URL as it is, where it could change the request: write {u:…} for a path segment or query value (percent-encoded), {q:…} for an OData string literal (quoted, then percent-encoded)`,
      });
  }
});

/** The answer says the call failed although it came back: BAPI `RETURN` type E, for example. */
const failWhen = z.strictObject({
  field: z.string().min(1),
  in: z.array(z.string()).min(1),
  message: z.string().min(1),
});

const result = z.strictObject({
  /** Written to the status facet's `erpReference`. */
  erpReference: template,
  /** Written to the status facet's `message` on success. */
  message: template.optional(),
});

const common = {
  parameters,
  result,
  failWhen: failWhen.optional(),
  /**
   * True when sending the same call twice leaves SAP as after one (no second row or work item).
   * A call that is neither repeatable nor checked by a lookup is not repeated after an
   * interrupted run or a lost answer: the document goes to FAILED for an operator to check.
   */
  repeatable: z.boolean().default(false),
  /**
   * How an operator checks by hand whether SAP has the call's work (a transaction, what to look
   * for), for a call that cannot be looked up: in the message of a document left to them.
   */
  manualCheck: template.optional(),
  /**
   * Before a document is DONE, its work is read back from SAP with the call's lookup, in a request
   * of its own: a write SAP answered but did not keep (not committed) is found at once, and the
   * document is looked up and sent again at its next attempt. One more read per document.
   */
  verify: z.boolean().default(false),
};

/**
 * A table read back to tell whether the work was done already: `match` keeps the rows whose fields
 * equal the filled values, `startsWith` those whose fields start with them (a key the call put at
 * the start of a name).
 */
const found = z.strictObject({
  list: z.string().min(1),
  match: z.record(z.string(), template).optional(),
  startsWith: z.record(z.string(), template).optional(),
});
export type LookupFound = z.infer<typeof found>;

const functionName = z.string().regex(/^[A-Z0-9_/]+$/, 'an upper-case function module name');

/** A function module that reads back what a call did (ARCHIV_GET_CONNECTIONS for a link). */
const functionLookup = z.strictObject({
  function: functionName,
  parameters: z.record(target, template),
  found,
  /** The ABAP exception that means "nothing there", e.g. NOTHING_FOUND. */
  notFound: z.string().optional(),
});

/**
 * A table of SAP's read with RFC_READ_TABLE (BDS_BAR_EX for a bar code): found when a row has every
 * field of `where` equal to its filled value. The job quotes the values as ABAP literals.
 */
const tableLookup = z.strictObject({
  table: z.string().regex(/^[A-Z0-9_/]+$/, 'an upper-case table name'),
  where: z
    .record(z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'an upper-case field name'), template)
    .refine((where) => Object.keys(where).length > 0, { message: 'name at least one field' }),
});
export type RfcLookupStep = z.infer<typeof functionLookup> | z.infer<typeof tableLookup>;

export const rfcCallSchema = z.strictObject({
  ...common,
  function: functionName,
  /**
   * How to tell whether SAP already has a document's work, before it is sent again: one step, or
   * several asked in turn, the first that finds it settling the question.
   */
  lookup: z
    .union([functionLookup, tableLookup, z.array(z.union([functionLookup, tableLookup])).min(1)])
    .transform((lookup): RfcLookupStep[] => (Array.isArray(lookup) ? lookup : [lookup]))
    .optional(),
  /** SAP message keys (class + number) that mean "already done", e.g. OA403. */
  alreadyDone: z.array(z.string()).default([]),
});
export type RfcCallConfig = z.infer<typeof rfcCallSchema>;

const method = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

export const restCallSchema = z.strictObject({
  ...common,
  /** Service root under the system's rest.url; the CSRF token is fetched from it. */
  service: z.string().regex(/^\/\S*$/, 'a path starting with /'),
  lookup: z
    .strictObject({
      method: z.literal('GET').default('GET'),
      path: urlTemplate,
      found,
    })
    .optional(),
  method,
  /** Relative to `service`; placeholders are filled from the parameters, each quoted for where it goes. */
  path: urlTemplate,
  headers: z.record(z.string().regex(/^[A-Za-z][\w-]*$/, 'an HTTP header name'), template).default({}),
  /** `content`: the document's file; `parameters`: the parameters as JSON; `none`: no body. */
  body: z.enum(['content', 'parameters', 'none']).default('none'),
  /** The service is an SAP Gateway (OData) one: writes take its CSRF handshake. */
  csrf: z.boolean().default(true),
});
export type RestCallConfig = z.infer<typeof restCallSchema>;

/**
 * SAP's data about the business object, read once a document is linked (or by `connect2erp
 * sap-data`) and written onto the document: the function module (RFC) or the GET (Rest) that reads
 * it, filled from the document like a call, and which field of the answer goes to which property.
 */
export const readSchema = z.strictObject({
  /** RFC: the function module, e.g. BAPI_INCOMINGINVOICE_GETDETAIL. */
  function: functionName.optional(),
  /** Rest: the service root under the system's rest.url and the entity's path, e.g. /A_SupplierInvoice(…). */
  service: z
    .string()
    .regex(/^\/\S*$/, 'a path starting with /')
    .optional(),
  path: urlTemplate.optional(),
  parameters,
  /** RFC: tables to have answered, sent empty (SAP's SOAP runtime answers the tables a call sends), e.g. RETURN. */
  tables: z.array(z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'an upper-case table name')).default([]),
  /** The answer says it failed: `RETURN.TYPE` reads every row when RETURN is a table (BAPIRET2). */
  failWhen: failWhen.optional(),
  /** A document property and the field of SAP's answer it takes: `erpData:vendor: HEADERDATA.DIFF_INV`. */
  properties: z
    .record(propertyName, z.string().min(1))
    .refine((p) => Object.keys(p).length > 0, { message: 'name at least one property' }),
});
export type ReadConfig = z.infer<typeof readSchema>;

/** A read's cross-field problems for a task of `transport`: its kind of request, and placeholders that name parameters. */
export function readProblems(read: ReadConfig, transport: 'RFC' | 'Rest'): CallProblem[] {
  const problems: CallProblem[] = [];
  if (transport === 'RFC' && read.function === undefined)
    problems.push({ path: ['function'], message: 'an RFC task reads with a function module: name it' });
  if (transport === 'Rest' && (read.service === undefined || read.path === undefined))
    problems.push({ path: ['service'], message: 'a Rest task reads with a GET: give its service and path' });
  const other = transport === 'RFC' ? (['service', 'path'] as const) : (['function'] as const);
  for (const key of other)
    if (read[key] !== undefined)
      problems.push({ path: [key], message: `the task's function is ${transport}: its read cannot use ${key}` });
  const known = new Set(Object.keys(read.parameters));
  for (const name of placeholders(read.path ?? ''))
    if (!known.has(name)) problems.push({ path: ['path'], message: `{${name}} is not one of the parameters` });
  for (const key of Object.keys(read.parameters))
    if (isColumn(key))
      problems.push({ path: ['parameters', key], message: 'a read is made per document: no table columns' });
  return problems;
}

export interface CallProblem {
  path: Array<string | number>;
  message: string;
}

/** Placeholder names in a template, without their `q:`/`u:` prefix. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].flatMap((m) => m[2].split('|'));
}

/** A call with `TABLE[].FIELD` columns sends the documents of a batch together. */
const isColumn = (target: string): boolean => target.includes('[]');
export const batches = (parameters: Record<string, ValueSpec>): boolean => Object.keys(parameters).some(isColumn);

/** Cross-field checks zod cannot express per field: every placeholder names a mapped parameter. */
export function callProblems(call: RfcCallConfig | RestCallConfig): CallProblem[] {
  const problems: CallProblem[] = [];
  const known = new Set(Object.keys(call.parameters));
  const check = (text: string, path: Array<string | number>, response: boolean): void => {
    for (const name of placeholders(text)) {
      if (known.has(name) || (response && name.startsWith('response.'))) continue;
      problems.push({ path, message: `{${name}} is not one of the parameters` });
    }
  };
  check(call.result.erpReference, ['result', 'erpReference'], true);
  if (call.result.message !== undefined) check(call.result.message, ['result', 'message'], true);
  if (call.manualCheck !== undefined) check(call.manualCheck, ['manualCheck'], false);
  const checkFound = (found: LookupFound, path: Array<string | number>): void => {
    for (const kind of ['match', 'startsWith'] as const)
      for (const [k, v] of Object.entries(found[kind] ?? {})) check(v, [...path, 'found', kind, k], false);
  };
  if ('function' in call) {
    for (const [i, step] of (call.lookup ?? []).entries()) {
      const path = call.lookup?.length === 1 ? ['lookup'] : ['lookup', i];
      const [key, templates]: [string, Record<string, string>] =
        'table' in step ? ['where', step.where] : ['parameters', step.parameters];
      for (const [k, v] of Object.entries(templates)) check(v, [...path, key, k], false);
      if ('found' in step) checkFound(step.found, path);
    }
  } else {
    check(call.path, ['path'], false);
    if (call.lookup) check(call.lookup.path, ['lookup', 'path'], false);
    for (const [k, v] of Object.entries(call.headers)) check(v, ['headers', k], false);
    if (call.lookup) checkFound(call.lookup.found, ['lookup']);
  }
  const batched = batches(call.parameters);
  for (const [k, spec] of Object.entries(call.parameters)) {
    if (batched && !isColumn(k) && spec.property !== undefined) {
      problems.push({
        path: ['parameters', k],
        message: 'in a call that batches documents (TABLE[].FIELD), values from the document go into table columns',
      });
    }
  }
  if (batched && 'body' in call && call.body !== 'parameters')
    problems.push({ path: ['body'], message: 'a call that batches documents (TABLE[].FIELD) sends body: parameters' });
  if (call.verify && call.lookup === undefined)
    problems.push({ path: ['verify'], message: "verify reads the work back with the call's lookup: declare one" });
  return problems;
}
