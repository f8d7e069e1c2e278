import type { NewFolder, RepositoryClient } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';

/**
 * Every write the job makes to the repository. Dry-run swaps the implementation,
 * so no call site needs its own guard.
 */
export interface RepositoryWriter {
  /** True when nothing is really written: what callers log says "would". */
  readonly dryRun: boolean;
  addFacet(uids: string[], facet: string): Promise<void>;
  update(doc: RepositoryDocument, properties: Record<string, unknown>): Promise<RepositoryDocument>;
  createFolder(
    parent: { uid: string; path: string },
    name: string,
    properties: Record<string, unknown>,
  ): Promise<RepositoryDocument>;
  move(doc: RepositoryDocument, target: RepositoryDocument): Promise<RepositoryDocument>;
  /** A new folder in `parent` with its facets and values, and `file` moved into it, at once; answers the file as moved. */
  placeInNewFolder(
    file: RepositoryDocument,
    parent: { uid: string; path: string },
    folder: NewFolder,
  ): Promise<RepositoryDocument>;
  /** The facet and its values off the document (`unlabel`). */
  removeFacet(doc: RepositoryDocument, facet: string): Promise<void>;
  /** Into the trash, from where an administrator can restore it. */
  trash(doc: RepositoryDocument): Promise<void>;
}

export function liveWriter(client: RepositoryClient): RepositoryWriter {
  return {
    dryRun: false,
    addFacet: (uids, facet) => client.addFacet(uids, facet),
    update: (doc, properties) => client.update(doc, properties),
    // Automation's create, as the folder chain's: the file's whole name (a REST create cuts it to 24 characters).
    createFolder: (parent, name, properties) => client.createNamed(parent.uid, { type: 'Folder', name, properties }),
    move: (doc, target) => client.move(doc.uid, target.uid),
    placeInNewFolder: (file, parent, folder) => client.placeInNewFolder(file.uid, parent.uid, folder),
    removeFacet: (doc, facet) => client.removeFacet(doc.uid, facet),
    trash: (doc) => client.trash(doc.uid),
  };
}

/** Writes nothing; answers with what the repository would hold afterwards, so the plan can go on. */
export function dryRunWriter(): RepositoryWriter {
  return {
    dryRun: true,
    addFacet: async () => undefined,
    update: async (doc, properties) => ({ ...doc, properties: { ...doc.properties, ...properties } }),
    createFolder: async (parent, name, properties) => ({
      uid: `(new folder in ${parent.path})`,
      path: `${parent.path}/${name}`,
      type: 'Folder',
      title: String(properties['dc:title']),
      parentRef: parent.uid,
      changeToken: null,
      facets: [],
      properties,
    }),
    move: async (doc, target) => ({
      ...doc,
      parentRef: target.uid,
      path: `${target.path}/${doc.path.slice(doc.path.lastIndexOf('/') + 1)}`,
    }),
    placeInNewFolder: async (file, parent, folder) => ({
      ...file,
      parentRef: `(new folder in ${parent.path})`,
      path: `${parent.path}/${folder.name}/${file.path.slice(file.path.lastIndexOf('/') + 1)}`,
    }),
    removeFacet: async () => undefined,
    trash: async () => undefined,
  };
}
