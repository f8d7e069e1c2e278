import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { ConfigError } from '../errors.js';
import { projectRoot } from '../project.js';

export type ScalarType = 'string' | 'boolean' | 'long' | 'double' | 'date' | 'blob';

export interface FieldDef {
  name: string;
  type: ScalarType | 'complex';
  list: boolean;
  /** Sub-fields of a complex field. */
  fields?: FieldDef[];
}

export interface SchemaDef {
  name: string;
  prefix: string;
  fields: Map<string, FieldDef>;
}

export interface TypeDef {
  name: string;
  parent?: string;
  schemas: string[];
  facets: string[];
}

const f = (name: string, type: ScalarType, list = false): FieldDef => ({ name, type, list });

/** The stock schemas the job and the sandbox's own users touch, as a fresh Nuxeo declares them. */
const BUILTIN_SCHEMAS: SchemaDef[] = [
  schema('dublincore', 'dc', [
    f('title', 'string'),
    f('description', 'string'),
    f('subjects', 'string', true),
    f('rights', 'string'),
    f('source', 'string'),
    f('coverage', 'string'),
    f('created', 'date'),
    f('modified', 'date'),
    f('issued', 'date'),
    f('valid', 'date'),
    f('expired', 'date'),
    f('format', 'string'),
    f('language', 'string'),
    f('creator', 'string'),
    f('contributors', 'string', true),
    f('lastContributor', 'string'),
    f('publisher', 'string'),
    f('nature', 'string'),
  ]),
  schema('common', 'common', [f('icon', 'string'), f('icon-expanded', 'string'), f('size', 'long')]),
  schema('file', 'file', [f('content', 'blob')]),
  schema('files', 'files', [{ name: 'files', type: 'complex', list: true, fields: [f('file', 'blob')] }]),
  schema('note', 'note', [f('note', 'string'), f('mime_type', 'string')]),
  schema('uid', 'uid', [f('uid', 'string'), f('major_version', 'long'), f('minor_version', 'long')]),
];

const FOLDER = ['common', 'dublincore'];
const BUILTIN_TYPES: TypeDef[] = [
  { name: 'Document', schemas: [], facets: [] },
  { name: 'Root', parent: 'Document', schemas: ['common'], facets: ['Folderish', 'NotCollectionMember'] },
  { name: 'Domain', parent: 'Document', schemas: FOLDER, facets: ['Folderish', 'SuperSpace', 'NotCollectionMember'] },
  { name: 'WorkspaceRoot', parent: 'Document', schemas: FOLDER, facets: ['Folderish', 'NotCollectionMember'] },
  { name: 'SectionRoot', parent: 'Document', schemas: FOLDER, facets: ['Folderish', 'NotCollectionMember'] },
  { name: 'TemplateRoot', parent: 'Document', schemas: FOLDER, facets: ['Folderish', 'NotCollectionMember'] },
  {
    name: 'Workspace',
    parent: 'Document',
    schemas: [...FOLDER, 'files'],
    facets: ['Folderish', 'SuperSpace', 'NotCollectionMember'],
  },
  { name: 'Folder', parent: 'Document', schemas: FOLDER, facets: ['Folderish', 'NotCollectionMember'] },
  {
    name: 'OrderedFolder',
    parent: 'Folder',
    schemas: FOLDER,
    facets: ['Folderish', 'Orderable', 'NotCollectionMember'],
  },
  {
    name: 'File',
    parent: 'Document',
    schemas: [...FOLDER, 'uid', 'file', 'files'],
    facets: ['Downloadable', 'Versionable', 'Publishable', 'Commentable', 'HasRelatedText'],
  },
  {
    name: 'Note',
    parent: 'Document',
    schemas: [...FOLDER, 'uid', 'note', 'files'],
    facets: ['Versionable', 'Publishable', 'Commentable', 'HasRelatedText'],
  },
];

function schema(name: string, prefix: string, fields: FieldDef[]): SchemaDef {
  return { name, prefix, fields: new Map(fields.map((field) => [field.name, field])) };
}

const XSD_TYPES: Record<string, ScalarType> = {
  string: 'string',
  boolean: 'boolean',
  long: 'long',
  integer: 'long',
  int: 'long',
  double: 'double',
  date: 'date',
  dateTime: 'date',
  content: 'blob',
};

/** An XML element fast-xml-parser gives as one object, several as a list, or none: as a list. */
export const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', removeNSPrefix: true });

/**
 * A declaration file's text. Missing or unreadable, it is a configuration problem naming the file
 * (exit 2, found by `validate`), never a failure in the middle of a run.
 */
function readDeclaration(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new ConfigError([
      {
        file: path,
        path: '',
        message: 'cannot read the file; it ships with connect2erp, so the installation is incomplete',
      },
    ]);
  }
}

/** Read the scalar elements of a Nuxeo XSD; anything richer is refused rather than guessed. */
function parseXsd(path: string, name: string, prefix: string): SchemaDef {
  const doc = xml.parse(readDeclaration(path)) as { schema?: { element?: unknown } };
  const elements = asArray(doc.schema?.element as Array<{ name: string; type: string }> | undefined);
  const fields = elements.map((element) => {
    const type = XSD_TYPES[String(element.type).replace(/^.*:/, '')];
    if (type === undefined)
      throw new ConfigError([
        { file: path, path: `element ${element.name}`, message: `unsupported type ${element.type}` },
      ]);
    return f(element.name, type);
  });
  return schema(name, prefix, fields);
}

interface Contribution {
  component?: { extension?: unknown };
}
interface Extension {
  point: string;
  schema?: unknown;
  facet?: unknown;
}

export class SchemaRegistry {
  readonly schemas = new Map<string, SchemaDef>();
  readonly byPrefix = new Map<string, SchemaDef>();
  readonly facets = new Map<string, string[]>();
  readonly types = new Map<string, TypeDef>();

  constructor() {
    BUILTIN_SCHEMAS.forEach((s) => this.addSchema(s));
    BUILTIN_TYPES.forEach((t) => this.types.set(t.name, t));
    for (const facet of [
      'Folderish',
      'SuperSpace',
      'NotCollectionMember',
      'Orderable',
      'Downloadable',
      'Versionable',
      'Publishable',
      'Commentable',
      'HasRelatedText',
      'HiddenInNavigation',
    ]) {
      this.facets.set(facet, []);
    }
  }

  private addSchema(def: SchemaDef): void {
    this.schemas.set(def.name, def);
    this.byPrefix.set(def.prefix, def);
  }

  /** Load a Nuxeo XML contribution (schema and doctype extension points) and the XSDs it names. */
  loadContribution(path: string): void {
    const doc = xml.parse(readDeclaration(path)) as Contribution;
    const extensions = asArray(doc.component?.extension as Extension[] | Extension | undefined);
    for (const extension of extensions) {
      if (extension.point === 'schema') {
        for (const s of asArray(extension.schema as Array<{ name: string; prefix?: string; src: string }>)) {
          this.addSchema(parseXsd(join(dirname(path), '..', s.src), s.name, s.prefix ?? s.name));
        }
      }
      if (extension.point === 'doctype') {
        for (const facet of asArray(extension.facet as Array<{ name: string; schema?: unknown }>)) {
          const schemas = asArray(facet.schema as Array<{ name: string }> | undefined).map((s) => s.name);
          this.facets.set(facet.name, schemas);
        }
      }
    }
  }

  /** A facet gone with its schemas, as on a server where the package that declares it is not deployed. */
  removeFacet(name: string): void {
    for (const schema of this.facets.get(name) as string[]) {
      this.byPrefix.delete((this.schemas.get(schema) as SchemaDef).prefix);
      this.schemas.delete(schema);
    }
    this.facets.delete(name);
  }

  /** The type and its ancestors, for `FROM File` matching subtypes. */
  isSubtypeOf(type: string, ancestor: string): boolean {
    for (let current: string | undefined = type; current !== undefined; current = this.types.get(current)?.parent) {
      if (current === ancestor) return true;
    }
    return false;
  }

  /** Resolve `prefix:field` (a schema with no prefix uses its name) to its schema and field. */
  property(key: string): { schema: SchemaDef; field: FieldDef } | undefined {
    const colon = key.indexOf(':');
    if (colon < 0) return undefined;
    const schemaDef = this.byPrefix.get(key.slice(0, colon));
    const field = schemaDef?.fields.get(key.slice(colon + 1));
    return schemaDef && field ? { schema: schemaDef, field } : undefined;
  }
}

/**
 * The feature's Nuxeo declarations, shared by the sandbox, the job's mapping validation and real
 * Nuxeo deployments. They ship with the program (`nuxeo-package/`), not in the configuration folder
 * an administrator replaces with a ConfigMap or a mount.
 */
export const FEATURE_CONTRIBUTION = join(
  projectRoot(import.meta.dirname),
  'nuxeo-package',
  'OSGI-INF',
  'connect2erp-types-contrib.xml',
);

let feature: SchemaRegistry | undefined;

/**
 * The stock types and schemas plus the feature's facets: what the job checks mappings and reads
 * against. Read from the package's files once a process: they do not change under it, and a run
 * asks for them from several places.
 */
export function featureRegistry(): SchemaRegistry {
  if (feature !== undefined) return feature;
  const registry = new SchemaRegistry();
  registry.loadContribution(FEATURE_CONTRIBUTION);
  feature = registry;
  return registry;
}
