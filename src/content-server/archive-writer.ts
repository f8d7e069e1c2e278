import { Readable } from 'node:stream';
import type { ContentServerConnection } from '../config/content-server-schema.js';
import type { Logger } from '../log.js';
import type { RepositoryClient } from '../repository/client.js';
import type { RepositoryDocument } from '../repository/document.js';
import {
  HTTP_CONTENT_FACET,
  SAP_DOCUMENT_FACET,
  type ArchiveDocument,
  type ArchiveDocuments,
  type Component,
} from './archive.js';
import { ArchiveLinkError, STATUS } from './protocol.js';

/** A component as SAP sends it: its id, its type and its bytes, streamed. */
export interface IncomingComponent {
  compId: string;
  mimeType: string;
  body: Readable;
}

/** compIds become document names in the folder of their document. */
const COMP_ID = /^[A-Za-z0-9_.-]{1,64}$/;

export function checkCompId(compId: string | undefined): string {
  if (compId === undefined || !COMP_ID.test(compId))
    throw new ArchiveLinkError(STATUS.badRequest, `compId "${String(compId ?? '')}" is missing or not a component id`);
  return compId;
}

/**
 * Every write the content server makes to the repository, for the documents SAP stores: a
 * folder named by the docId in the content repository's storage folder, carrying
 * fct_erp_http_content and fct_erp_sap_document (docProt, complete), with one file per component,
 * named by its compId. The folder is marked complete only once every component is in, so that a
 * create cut short by a crash is never served and the next create of that docId clears it away.
 */
export class ArchiveWriter {
  constructor(
    private readonly client: RepositoryClient,
    private readonly documents: ArchiveDocuments,
    private readonly connection: ContentServerConnection,
    private readonly log: Logger,
  ) {}

  /**
   * create (PUT or POST): 403 when the document exists; any component's failure removes what
   * was written and fails the whole create (§3, "Any component error cancels the whole create").
   */
  async create(
    contRep: string,
    docId: string,
    docProt: string,
    components: AsyncIterable<IncomingComponent>,
  ): Promise<void> {
    const repository = this.documents.repository(contRep);
    const existing = await this.documents.lookup(contRep, docId);
    if (existing?.complete) throw new ArchiveLinkError(STATUS.exists, `document ${docId} already exists`);
    if (existing !== undefined) {
      this.log.warn('incomplete document cleared', { docId, contRep, uid: existing.document.doc.uid });
      await this.client.remove(existing.document.doc.uid);
    }
    const storage = await this.storageFolder(repository.storagePath);
    const folder = await this.client.createNamed(storage.uid, { type: 'Folder', name: docId });
    if (!folder.path.endsWith(`/${docId}`)) {
      // Another create of the same docId got there first.
      await this.client.remove(folder.uid);
      throw new ArchiveLinkError(STATUS.exists, `document ${docId} already exists`);
    }
    try {
      await this.client.addFacet([folder.uid], HTTP_CONTENT_FACET);
      await this.client.addFacet([folder.uid], SAP_DOCUMENT_FACET);
      await this.client.setProperties(folder.uid, {
        'dc:title': docId,
        ...this.httpContent(contRep, docId, ''),
        'erpSapDocument:docProt': docProt,
        'erpSapDocument:complete': false,
      });
      const seen = new Set<string>();
      for await (const component of components) {
        if (seen.has(component.compId))
          throw new ArchiveLinkError(STATUS.badRequest, `component ${component.compId} is sent twice`);
        seen.add(component.compId);
        await this.addComponent(folder, contRep, docId, component);
      }
      await this.client.setProperties(folder.uid, { 'erpSapDocument:complete': true });
    } catch (error) {
      await this.client
        .remove(folder.uid)
        .catch((cleanup: unknown) =>
          this.log.error('incomplete document not removed', { docId, uid: folder.uid, error: String(cleanup) }),
        );
      throw error;
    }
  }

  /** update PUT: the component's content replaced, or the component created when missing. */
  async put(document: ArchiveDocument, incoming: IncomingComponent): Promise<void> {
    this.writable(document);
    const existing = (await this.documents.components(document)).find((c) => c.compId === incoming.compId);
    if (existing === undefined)
      return void (await this.addComponent(document.doc, document.contRep, document.docId, incoming));
    await this.replaceContent(existing.uid, incoming);
  }

  /** update POST: the document becomes exactly the components sent; the others are deleted (§3). */
  async replace(
    document: ArchiveDocument,
    docProt: string | undefined,
    incoming: AsyncIterable<IncomingComponent>,
  ): Promise<void> {
    this.writable(document);
    const before = await this.documents.components(document);
    const sent = new Set<string>();
    for await (const component of incoming) {
      sent.add(component.compId);
      await this.put(document, component);
    }
    for (const component of before.filter((c) => !sent.has(c.compId))) await this.client.remove(component.uid);
    if (docProt !== undefined) await this.client.setProperties(document.doc.uid, { 'erpSapDocument:docProt': docProt });
  }

  /**
   * append: the repository has no append, so the new blob is the old one streamed from the
   * repository followed by the request's body, uploaded as it comes.
   */
  async append(document: ArchiveDocument, component: Component, body: Readable): Promise<void> {
    this.writable(document);
    const old = await this.documents.open(component);
    const joined = Readable.from(
      (async function* () {
        yield* old.body;
        yield* body;
      })(),
    );
    const reference = await this.client.upload(joined, { name: component.compId, mimeType: component.mimeType });
    await this.client.setProperties(component.uid, { 'file:content': reference });
  }

  /** delete: one component, or the whole document; into the trash unless the content repository says remove. */
  async delete(document: ArchiveDocument, component: Component | undefined): Promise<void> {
    const { onDelete } = this.documents.repository(document.contRep);
    const uid = component === undefined ? document.doc.uid : component.uid;
    if (component !== undefined) this.writable(document);
    await (onDelete === 'trash' ? this.client.trash(uid) : this.client.remove(uid));
  }

  /** The job's documents belong to their users: SAP reads them, and may delete them, but changes only its own. */
  private writable(document: ArchiveDocument): void {
    if (!document.fromSap)
      throw new ArchiveLinkError(
        STATUS.inaccessible,
        `document ${document.docId} is a repository document; its content is changed in the repository`,
      );
  }

  private httpContent(contRep: string, docId: string, compId: string): Record<string, unknown> {
    const now = new Date().toISOString();
    return {
      'erpHttpContent:docId': docId,
      'erpHttpContent:source': this.connection.name,
      'erpHttpContent:archiveId': contRep,
      'erpHttpContent:compId': compId,
      'erpHttpContent:created': now,
      'erpHttpContent:modified': now,
      'erpHttpContent:scanPerformed': false,
    };
  }

  private async addComponent(
    folder: RepositoryDocument,
    contRep: string,
    docId: string,
    incoming: IncomingComponent,
  ): Promise<void> {
    const compId = checkCompId(incoming.compId);
    const file = await this.client.createNamed(folder.uid, { type: 'File', name: compId });
    await this.client.addFacet([file.uid], HTTP_CONTENT_FACET);
    const reference = await this.client.upload(incoming.body, { name: compId, mimeType: incoming.mimeType });
    await this.client.setProperties(file.uid, {
      'dc:title': compId,
      'file:content': reference,
      ...this.httpContent(contRep, docId, compId),
    });
  }

  private async replaceContent(uid: string, incoming: IncomingComponent): Promise<void> {
    const reference = await this.client.upload(incoming.body, { name: incoming.compId, mimeType: incoming.mimeType });
    await this.client.setProperties(uid, {
      'file:content': reference,
      'erpHttpContent:modified': new Date().toISOString(),
    });
  }

  private async storageFolder(path: string): Promise<RepositoryDocument> {
    try {
      return await this.client.getByPath(path);
    } catch (error) {
      this.log.error('storage folder unreadable', { path, error: String(error) });
      throw new ArchiveLinkError(
        STATUS.inaccessible,
        'the storage folder of this content repository is not accessible',
      );
    }
  }
}
