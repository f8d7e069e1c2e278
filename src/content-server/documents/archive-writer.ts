import { Readable } from 'node:stream';
import type { ContentServerConnection } from '../../config/content-server-schema.js';
import type { Logger } from '../../log.js';
import type { RepositoryClient, UploadReference } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { HTTP_CONTENT_FACET } from '../../status/http-content.js';
import { SAP_COMPLETE, SAP_DOCUMENT_FACET } from '../../status/http-content.js';
import { NAME, type ArchiveDocument, type ArchiveDocuments, type Component } from './archive.js';
import { ArchiveLinkError, STATUS } from '../protocol/protocol.js';

/** A component as SAP sends it: its id (checked when it is stored), its type and its bytes, streamed. */
export interface IncomingComponent {
  compId: string | undefined;
  mimeType: string;
  body: Readable;
}

/** A component's content already in an upload batch, waiting to be attached. */
interface Staged {
  compId: string;
  reference: UploadReference;
}

export function checkCompId(compId: string | undefined): string {
  if (compId === undefined || !NAME.test(compId))
    throw new ArchiveLinkError(STATUS.badRequest, `compId "${String(compId ?? '')}" is missing or not a component id`);
  return compId;
}

/**
 * Every write the content server makes to the repository, for the documents SAP stores: a
 * folder named by the docId in the content repository's storage folder, carrying
 * fct_erp_http_content and fct_erp_sap_document (docProt, complete), with one file per component,
 * named by its compId. The folder is marked complete only once every component is in, so that a
 * create cut short by a crash is never served and a later create of that docId clears it away.
 */
export class ArchiveWriter {
  constructor(
    private readonly client: RepositoryClient,
    private readonly documents: ArchiveDocuments,
    private readonly connection: ContentServerConnection,
    private readonly log: Logger,
    /** How old an incomplete document must be before a create of its docId clears it (one younger may still be on its way). */
    private readonly staleCreateMs: number,
  ) {}

  /**
   * create (PUT or POST): 403 when the document exists; any component's failure removes what
   * was written and fails the whole create (§3, "Any component error cancels the whole create").
   */
  async create(
    contRep: string,
    docId: string,
    docProt: string,
    components: AsyncIterable<IncomingComponent> | IncomingComponent[],
  ): Promise<void> {
    const repository = this.documents.repository(contRep);
    const existing = await this.documents.lookup(contRep, docId);
    if (existing?.complete) throw new ArchiveLinkError(STATUS.exists, `document ${docId} already exists`);
    if (existing !== undefined) await this.clearIncomplete(existing.document);
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
        [SAP_COMPLETE]: false,
      });
      for (const staged of await this.stage(components)) await this.addComponent(folder, contRep, docId, staged);
      await this.client.setProperties(folder.uid, { [SAP_COMPLETE]: true });
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
    await this.attach(document, await this.stage([incoming]));
  }

  /**
   * update POST: the document becomes exactly the components sent; the others are deleted (§3),
   * into the trash unless the content repository says remove.
   * Every part is uploaded before anything changes, so a part that fails leaves the document as it
   * was. Its protection stays what create gave it: update POST signs no docProt.
   */
  async replace(document: ArchiveDocument, incoming: AsyncIterable<IncomingComponent>): Promise<void> {
    this.writable(document);
    const staged = await this.stage(incoming);
    const before = await this.attach(document, staged);
    const sent = new Set(staged.map((s) => s.compId));
    for (const component of before.filter((c) => !sent.has(c.compId))) await this.discard(document, component.uid);
  }

  /**
   * append: the repository has no append, so the new blob is the old one streamed from the
   * repository followed by the request's body, uploaded as it comes; written with the component's
   * changeToken, so that an append or update made meanwhile is not silently lost (409).
   */
  async append(document: ArchiveDocument, component: Component, body: Readable): Promise<void> {
    this.writable(document);
    const batch = await this.client.newBatch();
    const old = await this.documents.open(component);
    try {
      const joined = Readable.from(
        (async function* () {
          yield* old.body;
          yield* body;
        })(),
      );
      const reference = await this.client.uploadInto(batch, joined, {
        name: component.compId,
        mimeType: component.mimeType,
      });
      await this.client.setProperties(component.uid, { 'file:content': reference }, component.changeToken);
    } finally {
      // Read off, when the upload stopped before its end: a body left unread would hold its connection.
      old.body.resume();
    }
  }

  /** delete: one component, or the whole document; into the trash unless the content repository says remove. */
  async delete(document: ArchiveDocument, component: Component | undefined): Promise<void> {
    if (component !== undefined) this.writable(document);
    await this.discard(document, component === undefined ? document.doc.uid : component.uid);
  }

  /** What delete and update POST take away goes where the content repository's onDelete says. */
  private async discard(document: ArchiveDocument, uid: string): Promise<void> {
    const { onDelete } = this.documents.repository(document.contRep);
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

  /** A crashed create's leftovers go; a create still on its way (younger than staleCreateMs) is left alone: 409. */
  private async clearIncomplete(document: ArchiveDocument): Promise<void> {
    if (Date.now() - document.created.getTime() < this.staleCreateMs)
      throw new ArchiveLinkError(STATUS.inaccessible, `document ${document.docId} is being stored by another request`);
    this.log.warn('incomplete document cleared', { docId: document.docId, uid: document.doc.uid });
    await this.client.remove(document.doc.uid);
  }

  /** Every component's content into an upload batch, one after the other, before any document changes. */
  private async stage(components: AsyncIterable<IncomingComponent> | IncomingComponent[]): Promise<Staged[]> {
    const staged: Staged[] = [];
    for await (const component of components) {
      const compId = checkCompId(component.compId);
      if (staged.some((s) => s.compId === compId))
        throw new ArchiveLinkError(STATUS.badRequest, `component ${compId} is sent twice`);
      staged.push({
        compId,
        reference: await this.client.upload(component.body, { name: compId, mimeType: component.mimeType }),
      });
    }
    return staged;
  }

  /** Staged contents onto the document's components, replacing or adding; answers the components it had. */
  private async attach(document: ArchiveDocument, staged: Staged[]): Promise<Component[]> {
    const before = await this.documents.components(document);
    for (const component of staged) {
      const existing = before.find((c) => c.compId === component.compId);
      if (existing === undefined) await this.addComponent(document.doc, document.contRep, document.docId, component);
      else
        await this.client.setProperties(
          existing.uid,
          { 'file:content': component.reference, 'erpHttpContent:modified': new Date().toISOString() },
          existing.changeToken,
        );
    }
    return before;
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
    staged: Staged,
  ): Promise<void> {
    const file = await this.client.createNamed(folder.uid, { type: 'File', name: staged.compId });
    await this.client.addFacet([file.uid], HTTP_CONTENT_FACET);
    await this.client.setProperties(file.uid, {
      'dc:title': staged.compId,
      'file:content': staged.reference,
      ...this.httpContent(contRep, docId, staged.compId),
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
