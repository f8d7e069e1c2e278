/** The parts of the repository's document entity the job reads. */
export interface RepositoryDocument {
  uid: string;
  path: string;
  type: string;
  title: string;
  parentRef: string | null;
  changeToken: string | null;
  facets: string[];
  properties: Record<string, unknown>;
  /** Nuxeo 10.2 and later: a document in the trash is still read by id. */
  isTrashed?: boolean;
}

export interface SearchPage {
  entries: RepositoryDocument[];
  resultsCount: number;
  isNextPageAvailable: boolean;
  /** The most the server returns per page (`nuxeo.pageprovider.default-max-page-size`). */
  maxPageSize?: number;
}

interface AceEntity {
  username: string;
  permission: string;
  granted: boolean;
  status?: string;
}

export interface AclEntity {
  acl: Array<{ name: string; ace: AceEntity[] }>;
}

/** Read a property, following `.` or `/` into complex values (`file:content.name`). */
export function propertyValue(doc: RepositoryDocument, reference: string): unknown {
  const [key, ...path] = reference.split(/[./]/);
  let value: unknown = doc.properties[key];
  for (const part of path) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}
