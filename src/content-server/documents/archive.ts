import { Readable } from 'node:stream';
import type { ContentRepositoryConfig, ContentServerConnection } from '../../config/content-server-schema.js';
import type { Logger } from '../../log.js';
import { unlessMissing, type ByteRange, type RepositoryClient } from '../../repository/client.js';
import { propertyValue, type RepositoryDocument } from '../../repository/document.js';
import { HTTP_CONTENT_FACET, SAP_COMPLETE, SAP_DOCUMENT_FACET } from '../../status/http-content.js';
import { cutRange } from './byte-slice.js';
import { ArchiveLinkError, DEFAULT_COMPONENTS, STATUS } from '../protocol/protocol.js';

/** One component: a blob of a repository document. */
export interface Component {
  compId: string;
  /** The repository document holding the blob. */
  uid: string;
  mimeType: string;
  /** Bytes. */
  length: number;
  created: Date;
  modified: Date;
  /** The component document's, for writes that must not overwrite a change made meanwhile. */
  changeToken: string | null;
}

/** A download started before it was known to be wanted (ArchiveDocuments.prefetch). */
export interface Prefetch {
  /** The component's whole content: the early download when it is this component's, else a new one. */
  take(component: Component): Promise<{ body: Readable; length: number }>;
  discard(): void;
}

/** An ArchiveLink document, as the repository holds it. */
export interface ArchiveDocument {
  docId: string;
  contRep: string;
  /** The repository document that is the ArchiveLink document: a file (the job's) or a folder (SAP's). */
  doc: RepositoryDocument;
  /** The protection SAP gave it at create time; the connection's default for the job's documents. */
  docProt: string;
  created: Date;
  modified: Date;
  /** Stored by SAP through this server (a folder whose children are the components). */
  fromSap: boolean;
}

/** The schemas of what a lookup reads: dates, the blob, the facet's values, SAP's protection. */
export const DOCUMENT_SCHEMAS = 'dublincore,file,erp_http_content,erp_sap_document';

/** A Nuxeo document id: the job's documents carry it as their docId. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * docIds of the documents SAP stores and compIds become document names: a letter or digit first
 * (never `.` or `..`), then letters, digits, `_`, `.` and `-`.
 */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A date property; the epoch for one a document lacks (SAP's headers need a date). */
const dateOf = (doc: RepositoryDocument, key: string): Date => {
  const time = Date.parse(String(doc.properties[key]));
  return new Date(Number.isNaN(time) ? 0 : time);
};

const text = (doc: RepositoryDocument, key: string): string => {
  const value = propertyValue(doc, key);
  return typeof value === 'string' ? value : '';
};

function componentOf(doc: RepositoryDocument, compId: string): Component {
  const blob = doc.properties['file:content'] as { 'mime-type'?: string; length?: string } | null | undefined;
  return {
    compId,
    uid: doc.uid,
    mimeType: blob?.['mime-type'] ?? 'application/octet-stream',
    length: Number(blob?.length ?? 0),
    created: dateOf(doc, 'dc:created'),
    modified: dateOf(doc, 'dc:modified'),
    changeToken: doc.changeToken,
  };
}

/**
 * The ArchiveLink documents of one connection, over the repository with the connection's account.
 * Lookups read by id or by path — never by a search, whose index lags writes on a production
 * Nuxeo — and then check that the document carries the facet with this content repository and
 * this connection as `source`; anything else is "not found" to SAP (and logged with the reason).
 */
export class ArchiveDocuments {
  constructor(
    private readonly client: RepositoryClient,
    private readonly connection: ContentServerConnection,
    private readonly log: Logger,
  ) {}

  /** The content repository's settings; 404 for one this connection does not serve. */
  repository(contRep: string | undefined): ContentRepositoryConfig {
    const found = this.connection.contentRepositories.find((r) => r.contRep === contRep);
    if (found === undefined)
      throw new ArchiveLinkError(STATUS.notFound, `content repository ${String(contRep)} is not served here`);
    return found;
  }

  /** The document, complete; undefined when there is none SAP may see. */
  async find(contRep: string, docId: string): Promise<ArchiveDocument | undefined> {
    const found = await this.lookup(contRep, docId);
    return found?.complete === false ? undefined : found?.document;
  }

  /**
   * The document and whether all its components arrived (a create that crashed half-way leaves
   * an incomplete one, which only a new create of the same docId sees, to clear it away).
   */
  async lookup(contRep: string, docId: string): Promise<{ document: ArchiveDocument; complete: boolean } | undefined> {
    const repository = this.repository(contRep);
    if (UUID.test(docId)) {
      const doc = await unlessMissing(this.client.getById(docId, DOCUMENT_SCHEMAS));
      if (doc !== undefined) return this.accept(doc, contRep, docId);
    }
    if (!NAME.test(docId)) return undefined;
    const doc = await unlessMissing(this.client.getByPath(`${repository.storagePath}/${docId}`));
    return doc === undefined ? undefined : this.accept(doc, contRep, docId);
  }

  /** Its components: the file's own blob, or a folder's children that carry a compId. */
  async components(document: ArchiveDocument): Promise<Component[]> {
    const { doc } = document;
    if (!document.fromSap) return [componentOf(doc, text(doc, 'erpHttpContent:compId') || 'data')];
    const children = await this.client.children(doc.uid);
    return children
      .filter((child) => !child.isTrashed && child.facets.includes(HTTP_CONTENT_FACET))
      .map((child) => componentOf(child, text(child, 'erpHttpContent:compId')))
      .filter((component) => component.compId !== '');
  }

  /** The component named, or the default one (`data`, else `data1`) when none is; 404 otherwise. */
  async component(document: ArchiveDocument, compId: string | undefined): Promise<Component> {
    const components = await this.components(document);
    const wanted = !compId ? DEFAULT_COMPONENTS : [compId];
    for (const name of wanted) {
      const found = components.find((c) => c.compId === name);
      if (found !== undefined) return found;
    }
    throw new ArchiveLinkError(
      STATUS.notFound,
      `component ${compId || 'data'} of document ${document.docId} not found`,
    );
  }

  /**
   * A component's bytes as they stream from the repository; a range is asked of the repository,
   * not cut out of a full download.
   */
  async open(component: Component, range?: ByteRange): Promise<{ body: Readable; length: number }> {
    if (component.length === 0) return { body: Readable.from([]), length: 0 };
    const answer = await this.client.openBlob(component.uid, range);
    // The length the document's metadata gives (clamped ranges): a repository that answers chunked says none.
    const length = range === undefined ? component.length : range.to - range.from + 1;
    return {
      body: range === undefined || answer.statusCode === 206 ? answer.body : cutRange(answer.body, range),
      length,
    };
  }

  /**
   * The whole blob of the document a UUID docId names, asked for at once, beside the read of its
   * metadata rather than after it: a job's document (the common case: an SAP user opening an
   * attachment) then costs one round trip instead of two. Nothing of it is sent before the document
   * passes its checks; `discard` drops it when it is not used.
   */
  prefetch(docId: string | undefined): Prefetch | undefined {
    if (docId === undefined || !UUID.test(docId)) return undefined;
    const answer = this.client.openBlob(docId).catch(() => undefined);
    let taken = false;
    return {
      take: async (component) => {
        const opened = component.uid === docId ? await answer : undefined;
        if (opened?.statusCode !== 200) return this.open(component);
        taken = true;
        return { body: opened.body, length: component.length };
      },
      discard: () => {
        // Read off and dropped, not destroyed: a destroyed body reports an abort nobody listens to.
        if (!taken) void answer.then((opened) => opened?.body.dump());
      },
    };
  }

  private accept(
    doc: RepositoryDocument,
    contRep: string,
    docId: string,
  ): { document: ArchiveDocument; complete: boolean } | undefined {
    const refuse = (reason: string): undefined => {
      this.log.info('document refused', { docId, contRep, uid: doc.uid, reason });
      return undefined;
    };
    if (doc.isTrashed === true) return refuse('in the trash');
    if (!doc.facets.includes(HTTP_CONTENT_FACET)) return refuse(`without ${HTTP_CONTENT_FACET}`);
    if (text(doc, 'erpHttpContent:docId') !== docId) return refuse('its erpHttpContent:docId is another');
    if (text(doc, 'erpHttpContent:archiveId') !== contRep) return refuse('its erpHttpContent:archiveId is another');
    if (text(doc, 'erpHttpContent:source') !== this.connection.name)
      return refuse('its erpHttpContent:source is another connection');
    const fromSap = doc.facets.includes(SAP_DOCUMENT_FACET);
    const docProt = fromSap ? text(doc, 'erpSapDocument:docProt') : this.connection.defaultProtection;
    return {
      document: {
        docId,
        contRep,
        doc,
        docProt,
        created: dateOf(doc, 'dc:created'),
        modified: dateOf(doc, 'dc:modified'),
        fromSap,
      },
      complete: !fromSap || doc.properties[SAP_COMPLETE] === true,
    };
  }
}
