import type { FieldDef, SchemaDef, SchemaRegistry } from '../../common/nuxeo/schemas.js';

/**
 * `GET /api/v1/config/schemas[/{name}]` and `/api/v1/config/facets[/{name}]` (ConfigEndPoint,
 * SchemaEndPoint and FacetEndPoint of nuxeo-rest-api-server): what an administrator's tool asks to
 * learn whether a package's schemas and facets are deployed.
 *
 * - One schema: SchemaJsonWriter (nuxeo-core-io): `entity-type` "schema", `name`, `prefix` and
 *   `@prefix` (when the schema has one), `fields` by local name: the primitive type's name, `[]`
 *   after a list's, "blob" for content, an object with `type` "complex" and its `fields`.
 * - The list of schemas: SchemasWriter (nuxeo-rest-api-io): a bare JSON array of `name`,
 *   `@prefix`, `fields`.
 * - One facet: FacetJsonWriter: `entity-type` "facet", `name`, `schemas` (schema entities, only
 *   when it has some).
 * - An unknown name: the end point returns SchemaManager's null, which JAX-RS answers with 204 and
 *   no body.
 */
type ConfigAnswer = { status: 200; body: unknown } | { status: 204 };

export function configAnswer(registry: SchemaRegistry, path: string[]): ConfigAnswer | undefined {
  const [kind, name, ...rest] = path;
  if (rest.length > 0 || (kind !== 'schemas' && kind !== 'facets')) return undefined;
  if (kind === 'schemas') {
    if (name === undefined || name === '')
      return { status: 200, body: [...registry.schemas.values()].map((s) => listedSchema(s)) };
    const schema = registry.schemas.get(name);
    return schema === undefined ? { status: 204 } : { status: 200, body: schemaEntity(schema) };
  }
  if (name === undefined || name === '')
    return { status: 200, body: [...registry.facets.keys()].map((facet) => facetEntity(registry, facet)) };
  return registry.facets.has(name) ? { status: 200, body: facetEntity(registry, name) } : { status: 204 };
}

function facetEntity(registry: SchemaRegistry, name: string): Record<string, unknown> {
  const schemas = (registry.facets.get(name) as string[]).map((s) => registry.schemas.get(s) as SchemaDef);
  return {
    'entity-type': 'facet',
    name,
    ...(schemas.length > 0 ? { schemas: schemas.map((s) => schemaEntity(s)) } : {}),
  };
}

function schemaEntity(schema: SchemaDef): Record<string, unknown> {
  return {
    'entity-type': 'schema',
    name: schema.name,
    prefix: schema.prefix,
    '@prefix': schema.prefix,
    fields: fieldsOf([...schema.fields.values()]),
  };
}

const listedSchema = (schema: SchemaDef): Record<string, unknown> => ({
  name: schema.name,
  '@prefix': schema.prefix,
  fields: fieldsOf([...schema.fields.values()]),
});

function fieldsOf(fields: FieldDef[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((field) => [field.name, fieldType(field)]));
}

function fieldType(field: FieldDef): unknown {
  if (field.type !== 'complex') return field.list ? `${field.type}[]` : field.type;
  // The registry's only complex fields are lists (files:files): parseXsd refuses complex types.
  return { type: 'complex[]', fields: fieldsOf(field.fields as FieldDef[]) };
}
