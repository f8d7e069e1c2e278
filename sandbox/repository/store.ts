import { createHash, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { checkPermission, type Acl } from './acl.js';
import { pathSegment, uniqueName } from './naming.js';
import type { FieldDef, SchemaRegistry, TypeDef } from '../../common/nuxeo/schemas.js';

export interface StoredBlob {
  name: string;
  'mime-type': string;
  encoding: string | null;
  digestAlgorithm: 'MD5';
  digest: string;
  length: string;
}

export interface StoredDoc {
  readonly uid: string;
  readonly parentId: string | null;
  readonly name: string;
  readonly path: string;
  readonly type: string;
  /** Instance facets (added with AddFacet); type facets come from the type. */
  readonly facets: readonly string[];
  readonly properties: Readonly<Record<string, unknown>>;
  readonly acls: readonly Acl[];
  readonly trashed: boolean;
  readonly state: string;
  readonly sysChange: number;
  readonly userChange: number;
}

export interface User {
  password: string;
  groups: string[];
}

/** A failure that the HTTP layer turns into an exception entity with this status. */
export class RepositoryError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const SECURED = new Set(['dc:created', 'dc:modified', 'dc:creator', 'dc:contributors', 'dc:lastContributor']);

export interface Actor {
  name: string;
  principals: ReadonlySet<string>;
  isAdministrator: boolean;
}

/** A batch-upload reference resolves to a stored blob, or to undefined when unknown. */
export type BlobResolver = (reference: Record<string, unknown>) => StoredBlob | undefined;

/** For writes that attach no uploaded blob: every blob reference resolves to nothing. */
export const NO_BLOBS: BlobResolver = () => undefined;

export class Store {
  private readonly docs = new Map<string, StoredDoc>();
  private readonly byPath = new Map<string, string>();
  private readonly children = new Map<string, Set<string>>();
  private readonly byType = new Map<string, Set<string>>();
  private readonly byFacet = new Map<string, Set<string>>();
  /** Documents without a facet, for the facets a query asked that of (`ecm:mixinType <> …`); built on first use. */
  private readonly withoutFacet = new Map<string, Set<string>>();
  /** A type's and instance facets' facets and schemas, worked out once per combination. */
  private readonly shapes = new Map<string, { facets: readonly string[]; schemas: readonly string[] }>();
  private readonly descendantCount = new Map<string, number>();
  private readonly propIndexes = new Map<string, Map<string, Set<string>>>();
  private readonly blobContent = new Map<string, Buffer>();
  /** Every uid in order, for keyset pages (`ecm:uuid > … ORDER BY ecm:uuid`); built on first use. */
  private ordered?: string[];
  private readonly journal?: string;
  /** The changes of the transaction under way, to be undone if it fails. */
  private open?: Array<{ before: StoredDoc | undefined; after: StoredDoc | undefined }>;
  readonly rootId: string;
  /** Sees every committed change, in order: what the search index is fed from. */
  onCommit: (uid: string, after: StoredDoc | undefined) => void = () => undefined;

  /** `mirrorOf`: an empty copy to be filled with `mirror`, standing for a search index of that store. */
  constructor(
    readonly registry: SchemaRegistry,
    private readonly dataDir?: string,
    mirrorOf?: Store,
  ) {
    if (dataDir !== undefined) {
      mkdirSync(join(dataDir, 'blobs'), { recursive: true });
      this.journal = join(dataDir, 'journal.jsonl');
      if (existsSync(this.journal)) this.replay(this.journal);
    }
    const root = mirrorOf?.rootId ?? this.byPath.get('/');
    this.rootId = root ?? this.initialTree();
  }

  // ---- reading -------------------------------------------------------------

  get(uid: string): StoredDoc | undefined {
    return this.docs.get(uid);
  }

  getByPath(path: string): StoredDoc | undefined {
    const uid = this.byPath.get(path.length > 1 ? path.replace(/\/+$/, '') : path);
    return uid === undefined ? undefined : this.docs.get(uid);
  }

  all(): IterableIterator<StoredDoc> {
    return this.docs.values();
  }

  childIds(uid: string): ReadonlySet<string> {
    return this.children.get(uid) ?? new Set();
  }

  /** Every document strictly below `uid`, depth first. */
  *descendants(uid: string): Generator<StoredDoc> {
    const stack = [...this.childIds(uid)];
    while (stack.length > 0) {
      const id = stack.pop() as string;
      yield this.docs.get(id) as StoredDoc;
      stack.push(...this.childIds(id));
    }
  }

  countDescendants(uid: string): number {
    return this.descendantCount.get(uid) ?? 0;
  }

  /** All uids, ascending: a query ordered by uuid walks it from its keyset instead of sorting. */
  uidsInOrder(): readonly string[] {
    this.ordered ??= [...this.docs.keys()].sort();
    return this.ordered;
  }

  idsOfType(type: string): ReadonlySet<string> {
    return this.byType.get(type) ?? new Set();
  }

  idsWithFacet(facet: string): ReadonlySet<string> {
    return this.byFacet.get(facet) ?? new Set();
  }

  /** Documents without the facet; the index is built on first use and kept from then on. */
  idsWithoutFacet(facet: string): ReadonlySet<string> {
    let ids = this.withoutFacet.get(facet);
    if (ids === undefined) {
      ids = new Set([...this.docs.values()].filter((doc) => !this.facetsOf(doc).includes(facet)).map((doc) => doc.uid));
      this.withoutFacet.set(facet, ids);
    }
    return ids;
  }

  /** Documents whose property (or one of its list items) has this value; the index is built on first use. */
  idsWithValue(key: string, value: unknown): ReadonlySet<string> {
    return this.indexed(key, JSON.stringify(value));
  }

  /** Documents with no value for the property (`IS NULL`), from the same index. */
  idsWithoutValue(key: string): ReadonlySet<string> {
    return this.indexed(key, NO_VALUE);
  }

  private indexed(key: string, valueKey: string): ReadonlySet<string> {
    return this.valueIndex(key).get(valueKey) ?? new Set();
  }

  private valueIndex(key: string): Map<string, Set<string>> {
    let index = this.propIndexes.get(key);
    if (index === undefined) {
      index = new Map();
      this.propIndexes.set(key, index);
      for (const doc of this.docs.values()) indexValue(index, doc.uid, doc.properties[key], true);
    }
    return index;
  }

  /** Stored documents only ever have a registered type and registered facets (create and addFacet check). */
  private typeOf(doc: StoredDoc): TypeDef {
    return this.registry.types.get(doc.type) as TypeDef;
  }

  typeFacets(doc: StoredDoc): string[] {
    return this.typeOf(doc).facets;
  }

  facetsOf(doc: StoredDoc): readonly string[] {
    return this.shapeOf(doc).facets;
  }

  schemasOf(doc: StoredDoc): readonly string[] {
    return this.shapeOf(doc).schemas;
  }

  /** Every read and write asks for these: worked out once per type and set of instance facets, not per request. */
  private shapeOf(doc: StoredDoc): { facets: readonly string[]; schemas: readonly string[] } {
    const key = `${doc.type}:${doc.facets.join(',')}`;
    let shape = this.shapes.get(key);
    if (shape === undefined) {
      const type = this.typeOf(doc);
      const schemas = new Set(type.schemas);
      for (const facet of doc.facets) for (const s of this.registry.facets.get(facet) as string[]) schemas.add(s);
      shape = {
        facets: [...type.facets, ...doc.facets.filter((f) => !type.facets.includes(f))],
        schemas: [...schemas],
      };
      this.shapes.set(key, shape);
    }
    return shape;
  }

  isFolderish(doc: StoredDoc): boolean {
    return this.typeFacets(doc).includes('Folderish');
  }

  changeToken(doc: StoredDoc): string {
    return `${doc.sysChange}-${doc.userChange}`;
  }

  /** Ids of the document's ancestors, nearest first (`ecm:ancestorId`). */
  ancestorIds(doc: StoredDoc): string[] {
    const ids: string[] = [];
    for (let id = doc.parentId; id !== null; id = this.docs.get(id)?.parentId ?? null) ids.push(id);
    return ids;
  }

  /** The document's ACLs, then each ancestor's, nearest first. */
  aclChain(doc: StoredDoc): Acl[][] {
    const chain: Acl[][] = [];
    for (
      let current: StoredDoc | undefined = doc;
      current;
      current = current.parentId ? this.docs.get(current.parentId) : undefined
    ) {
      chain.push([...current.acls]);
    }
    return chain;
  }

  can(actor: Actor, doc: StoredDoc, permission: string): boolean {
    return actor.isAdministrator || checkPermission(this.aclChain(doc), actor.principals, permission);
  }

  require(actor: Actor, doc: StoredDoc, permission: string): void {
    if (!this.can(actor, doc, permission)) {
      throw new RepositoryError(403, `Privilege '${permission}' is not granted to '${actor.name}'`);
    }
  }

  /** A blob's bytes `from` to `to` (both included), streamed: from disk when the store keeps its files there. */
  blobStream(blob: StoredBlob, from = 0, to = Number(blob.length) - 1): Readable {
    if (this.dataDir === undefined)
      return Readable.from([(this.blobContent.get(blob.digest) as Buffer).subarray(from, to + 1)]);
    return createReadStream(join(this.dataDir, 'blobs', blob.digest), { start: from, end: Math.max(from, to) });
  }

  storeBlob(content: Buffer, name: string, mimeType: string): StoredBlob {
    const digest = createHash('md5').update(content).digest('hex');
    if (this.dataDir === undefined) this.blobContent.set(digest, content);
    else writeFileSync(join(this.dataDir, 'blobs', digest), content);
    return {
      name,
      'mime-type': mimeType,
      encoding: null,
      digestAlgorithm: 'MD5',
      digest,
      length: String(content.length),
    };
  }

  // ---- writing -------------------------------------------------------------

  /**
   * Create a child. `rawName` keeps the name as given (Automation Document.Create);
   * otherwise the name goes through PathSegmentService (REST POST).
   */
  create(
    actor: Actor,
    parent: StoredDoc,
    input: { type: string; name: string; properties: Record<string, unknown>; rawName?: boolean; fromText?: boolean },
    resolveBlob: BlobResolver,
  ): StoredDoc {
    if (!this.registry.types.has(input.type) || input.type === 'Document' || input.type === 'Root') {
      throw new RepositoryError(400, `Type: ${input.type} does not exist`);
    }
    if (!this.isFolderish(parent))
      throw new RepositoryError(400, `Cannot create a document in ${parent.path}: it is not a folder`);
    this.require(actor, parent, 'AddChildren');
    const base = input.rawName ? input.name : pathSegment(input.name);
    const name = uniqueName(base, (candidate) => this.byPath.has(join(parent.path, candidate)));
    const now = new Date().toISOString();
    let doc: StoredDoc = {
      uid: randomUUID(),
      parentId: parent.uid,
      name,
      path: join(parent.path, name),
      type: input.type,
      facets: [],
      properties: {},
      acls: [],
      trashed: false,
      state: 'project',
      sysChange: 0,
      userChange: 0,
    };
    doc = {
      ...doc,
      properties: this.withProperties(actor, doc, input.properties, resolveBlob, input.fromText ?? false),
    };
    doc = this.stamp(doc, actor, { 'dc:created': now, 'dc:creator': actor.name });
    this.commit(undefined, { ...doc, sysChange: 1 });
    return this.docs.get(doc.uid) as StoredDoc;
  }

  /**
   * Partial update. Properties of a schema the document lacks are dropped silently,
   * exactly as the real server does; a stale user change token is a 409.
   */
  update(
    actor: Actor,
    doc: StoredDoc,
    properties: Record<string, unknown>,
    resolveBlob: BlobResolver,
    options: { changeToken?: string; fromText?: boolean } = {},
  ): StoredDoc {
    this.require(actor, doc, 'WriteProperties');
    const checked = options.changeToken !== undefined && options.changeToken !== null;
    if (checked && String(options.changeToken).split('-').pop() !== String(doc.userChange)) {
      throw new RepositoryError(409, `${doc.uid}, Invalid change token`);
    }
    const changed = this.stampOwn(
      doc,
      this.withProperties(actor, doc, properties, resolveBlob, options.fromText ?? false),
      actor,
    );
    return this.save(doc, changed, checked);
  }

  addFacet(actor: Actor, doc: StoredDoc, facet: string): StoredDoc {
    if (!this.registry.facets.has(facet)) throw new RepositoryError(500, `No such facet: ${facet}`);
    this.require(actor, doc, 'WriteProperties');
    if (this.facetsOf(doc).includes(facet)) return doc;
    return this.save(doc, this.stamp({ ...doc, facets: [...doc.facets, facet] }, actor), false);
  }

  /** Only instance facets can go; their schemas' fields are cleared unless still supplied. */
  removeFacet(actor: Actor, doc: StoredDoc, facet: string): StoredDoc {
    this.require(actor, doc, 'WriteProperties');
    if (!doc.facets.includes(facet)) return doc;
    const without = { ...doc, facets: doc.facets.filter((f) => f !== facet) };
    const kept = new Set(this.schemasOf(without));
    const properties = Object.fromEntries(
      Object.entries(doc.properties).filter(([key]) => {
        const prop = this.registry.property(key);
        return prop !== undefined && kept.has(prop.schema.name);
      }),
    );
    return this.save(doc, this.stamp({ ...without, properties }, actor), false);
  }

  move(actor: Actor, doc: StoredDoc, target: StoredDoc, newName?: string): StoredDoc {
    if (!this.isFolderish(target))
      throw new RepositoryError(400, `Cannot move into ${target.path}: it is not a folder`);
    if (target.uid === doc.uid || target.path.startsWith(`${doc.path}/`)) {
      throw new RepositoryError(400, `Cannot move ${doc.path} into itself`);
    }
    this.require(actor, doc, 'Remove');
    this.require(actor, target, 'AddChildren');
    const base = newName ?? doc.name;
    const name =
      target.uid === doc.parentId && base === doc.name
        ? base
        : uniqueName(base, (candidate) => this.byPath.has(join(target.path, candidate)));
    const moved = { ...doc, parentId: target.uid, name, path: join(target.path, name), sysChange: doc.sysChange + 1 };
    this.commit(doc, moved);
    this.repath(moved);
    return moved;
  }

  /**
   * Document.Trash (TrashServiceImpl, Nuxeo 10.2 and later): the document is flagged and renamed
   * `<name>._<millis>_.trashed`, so that its name is free again; its descendants are flagged later
   * by a background work, which the sandbox leaves out (they stay as they were: the stricter case
   * for a client, which must not take a document below a trashed one for a live one).
   */
  trash(actor: Actor, doc: StoredDoc): StoredDoc {
    this.require(actor, doc, 'Remove');
    if (doc.trashed) return doc;
    const parent = this.docs.get(doc.parentId as string) as StoredDoc;
    const name = `${doc.name}._${Date.now()}_.trashed`;
    const trashed = { ...doc, name, path: join(parent.path, name), trashed: true };
    this.commit(doc, { ...trashed, sysChange: doc.sysChange + 1 });
    this.repath(trashed);
    return this.docs.get(doc.uid) as StoredDoc;
  }

  remove(actor: Actor, doc: StoredDoc): void {
    if (doc.uid === this.rootId) throw new RepositoryError(400, 'Cannot remove the root');
    this.require(actor, doc, 'Remove');
    for (const child of [...this.descendants(doc.uid)].reverse()) this.commit(child, undefined);
    this.commit(doc, undefined);
  }

  /** A mirror takes a document's state, or its removal, as the store it mirrors committed it. */
  mirror(uid: string, after: StoredDoc | undefined): void {
    this.commit(this.docs.get(uid), after);
  }

  setAcls(actor: Actor, doc: StoredDoc, acls: Acl[]): StoredDoc {
    this.require(actor, doc, 'WriteSecurity');
    return this.save(doc, { ...doc, acls }, false);
  }

  // ---- internals -----------------------------------------------------------

  private save(before: StoredDoc, after: StoredDoc, userChange: boolean): StoredDoc {
    const saved = { ...after, sysChange: before.sysChange + 1, userChange: before.userChange + (userChange ? 1 : 0) };
    this.commit(before, saved);
    return saved;
  }

  /** DublinCoreListener: modification date and contributors follow every save. */
  private stamp(doc: StoredDoc, actor: Actor, extra: Record<string, unknown> = {}): StoredDoc {
    return this.stampOwn(doc, { ...doc.properties }, actor, extra);
  }

  /** The same, `properties` being the caller's own new copy of the document's: no second copy. */
  private stampOwn(
    doc: StoredDoc,
    properties: Record<string, unknown>,
    actor: Actor,
    extra: Record<string, unknown> = {},
  ): StoredDoc {
    if (!this.schemasOf(doc).includes('dublincore')) return { ...doc, properties };
    const contributors = (properties['dc:contributors'] as string[] | undefined) ?? [];
    Object.assign(properties, extra, { 'dc:modified': new Date().toISOString(), 'dc:lastContributor': actor.name });
    if (!contributors.includes(actor.name)) properties['dc:contributors'] = [...contributors, actor.name];
    return { ...doc, properties };
  }

  private withProperties(
    actor: Actor,
    doc: StoredDoc,
    input: Record<string, unknown>,
    resolveBlob: BlobResolver,
    fromText: boolean,
  ): Record<string, unknown> {
    const schemas = this.schemasOf(doc);
    const properties = { ...doc.properties };
    for (const [key, raw] of Object.entries(input)) {
      const prop = this.registry.property(key);
      // Unknown, or of a schema the document lacks: skipped without error (the real server's trap).
      if (prop === undefined || !schemas.includes(prop.schema.name)) continue;
      if (SECURED.has(key) && !actor.isAdministrator) {
        throw new RepositoryError(400, `Cannot set the value of property: ${key} since it is readonly`);
      }
      const value = coerce(prop.field, raw, key, fromText, resolveBlob);
      if (value === UNCHANGED) continue;
      if (value === null || (Array.isArray(value) && value.length === 0)) delete properties[key];
      else properties[key] = value;
    }
    return properties;
  }

  private initialTree(): string {
    const system: Actor = { name: 'system', principals: new Set(), isAdministrator: true };
    const rootId = randomUUID();
    this.commit(undefined, {
      uid: rootId,
      parentId: null,
      name: '',
      path: '/',
      type: 'Root',
      facets: [],
      properties: {},
      acls: [
        {
          name: 'local',
          aces: [
            {
              username: 'administrators',
              permission: 'Everything',
              granted: true,
              creator: null,
              begin: null,
              end: null,
            },
            { username: 'members', permission: 'Read', granted: true, creator: null, begin: null, end: null },
          ],
        },
      ],
      trashed: false,
      state: 'undefined',
      sysChange: 0,
      userChange: 0,
    });
    const domain = this.create(
      system,
      this.get(rootId) as StoredDoc,
      { type: 'Domain', name: 'default-domain', properties: { 'dc:title': 'Domain' } },
      NO_BLOBS,
    );
    this.create(
      system,
      domain,
      { type: 'WorkspaceRoot', name: 'workspaces', properties: { 'dc:title': 'Workspaces' } },
      NO_BLOBS,
    );
    this.create(
      system,
      domain,
      { type: 'SectionRoot', name: 'sections', properties: { 'dc:title': 'Sections' } },
      NO_BLOBS,
    );
    this.create(
      system,
      domain,
      { type: 'TemplateRoot', name: 'templates', properties: { 'dc:title': 'Templates' } },
      NO_BLOBS,
    );
    return rootId;
  }

  /** After a move, every descendant's path follows its parent's. */
  private repath(parent: StoredDoc): void {
    // A copy: re-indexing a child removes and re-adds it to the live set, which would visit it forever.
    for (const childId of [...this.childIds(parent.uid)]) {
      const child = this.docs.get(childId) as StoredDoc;
      const moved = { ...child, path: join(parent.path, child.name) };
      this.commit(child, moved);
      this.repath(moved);
    }
  }

  /**
   * Run `work` as one transaction: its writes are seen by what follows inside it, and kept, journaled
   * and fed to the search index only when it ends without an error; an error undoes them all. A REST
   * or Automation request is one transaction in Nuxeo (the web engine's request transaction,
   * rolled back when the request fails). Transactions do not nest: each request opens its own.
   */
  transaction<T>(work: () => T): T {
    const open: Array<{ before: StoredDoc | undefined; after: StoredDoc | undefined }> = [];
    this.open = open;
    try {
      const result = work();
      this.open = undefined;
      for (const { before, after } of open) this.publish((after ?? before) as StoredDoc, after);
      return result;
    } catch (error) {
      this.open = undefined;
      for (const { before, after } of open.reverse()) this.apply(after, before);
      throw error;
    }
  }

  private commit(before: StoredDoc | undefined, after: StoredDoc | undefined): void {
    this.apply(before, after);
    if (this.open !== undefined) this.open.push({ before, after });
    else this.publish((after ?? before) as StoredDoc, after);
  }

  /** The journal and the search index hear of a change once it is committed. */
  private publish({ uid }: StoredDoc, after: StoredDoc | undefined): void {
    if (this.journal !== undefined) {
      appendFileSync(this.journal, `${JSON.stringify(after ? { put: after } : { del: uid })}\n`);
    }
    this.onCommit(uid, after);
  }

  private apply(before: StoredDoc | undefined, after: StoredDoc | undefined): void {
    if (before && after && before.path === after.path) this.reindex(before, after);
    else {
      if (before) this.unindex(before);
      if (after) this.index(after);
    }
    // Every commit has a document before it, after it, or both.
    const { uid } = (after ?? before) as StoredDoc;
    if (this.ordered !== undefined && (before === undefined) !== (after === undefined)) {
      const at = bisect(this.ordered, uid);
      if (after) this.ordered.splice(at, 0, uid);
      else this.ordered.splice(at, 1);
    }
  }

  private index(doc: StoredDoc): void {
    const isNew = !this.docs.has(doc.uid);
    this.docs.set(doc.uid, doc);
    this.byPath.set(doc.path, doc.uid);
    if (doc.parentId !== null) addTo(this.children, doc.parentId, doc.uid);
    addTo(this.byType, doc.type, doc.uid);
    this.indexFacets(doc, true);
    for (const [key, index] of this.propIndexes) indexValue(index, doc.uid, doc.properties[key], true);
    if (isNew) this.adjustCounts(doc.parentId, 1);
  }

  /** A write in place (same path, so same parent): only what changed is re-indexed, the rest stays. */
  private reindex(before: StoredDoc, after: StoredDoc): void {
    this.docs.set(after.uid, after);
    if (before.facets !== after.facets) {
      this.indexFacets(before, false);
      this.indexFacets(after, true);
    }
    for (const [key, index] of this.propIndexes) {
      if (before.properties[key] === after.properties[key]) continue;
      indexValue(index, before.uid, before.properties[key], false);
      indexValue(index, after.uid, after.properties[key], true);
    }
  }

  private indexFacets(doc: StoredDoc, add: boolean): void {
    const facets = this.facetsOf(doc);
    for (const facet of facets) {
      if (add) addTo(this.byFacet, facet, doc.uid);
      else this.byFacet.get(facet)?.delete(doc.uid);
    }
    for (const [facet, ids] of this.withoutFacet) {
      if (facets.includes(facet)) continue;
      if (add) ids.add(doc.uid);
      else ids.delete(doc.uid);
    }
  }

  private unindex(doc: StoredDoc): void {
    this.docs.delete(doc.uid);
    if (this.byPath.get(doc.path) === doc.uid) this.byPath.delete(doc.path);
    if (doc.parentId !== null) this.children.get(doc.parentId)?.delete(doc.uid);
    this.byType.get(doc.type)?.delete(doc.uid);
    this.indexFacets(doc, false);
    for (const [key, index] of this.propIndexes) indexValue(index, doc.uid, doc.properties[key], false);
    this.adjustCounts(doc.parentId, -1);
  }

  /** Keep descendant counts of ancestors, so a query can pick its smallest candidate set. */
  private adjustCounts(parentId: string | null, delta: number): void {
    for (let id = parentId; id !== null; id = this.docs.get(id)?.parentId ?? null) {
      this.descendantCount.set(id, (this.descendantCount.get(id) ?? 0) + delta);
    }
  }

  /** Rebuild state from the journal, then compact it to one line per live document. */
  private replay(journal: string): void {
    const lines = readFileSync(journal, 'utf8').split('\n');
    for (const line of lines) {
      if (line === '') continue;
      const entry = JSON.parse(line) as { put?: StoredDoc; del?: string };
      const existing = this.docs.get(entry.put?.uid ?? (entry.del as string));
      if (existing) this.unindex(existing);
      if (entry.put) this.index(entry.put);
    }
    const compacted = `${journal}.tmp`;
    writeFileSync(compacted, [...this.docs.values()].map((doc) => `${JSON.stringify({ put: doc })}\n`).join(''));
    renameSync(compacted, journal);
  }
}

/** Index of the first element of the ascending `list` not below `value` (with `after`: above it). */
export function bisect(list: readonly string[], value: string, after = false): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (list[mid] < value || (after && list[mid] === value)) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The value index's key for "no value" (null, absent, an empty list or one of nulls): no JSON text is empty. */
const NO_VALUE = '';

function indexValue(index: Map<string, Set<string>>, uid: string, value: unknown, add: boolean): void {
  const items = Array.isArray(value) ? value : [value];
  const keys = items.filter((item) => item !== null && item !== undefined).map((item) => JSON.stringify(item));
  if (keys.length === 0) keys.push(NO_VALUE);
  for (const key of keys) {
    if (add) addTo(index, key, uid);
    else index.get(key)?.delete(uid);
  }
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (set === undefined) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

const UNCHANGED = Symbol('unchanged');

/**
 * A list property given as text through Automation (DocumentHelper.setListProperty): a list of
 * scalars split at commas, a backslash escaping a comma or a backslash (readStringList); a list of
 * complex values read as JSON (ComplexTypeJSONDecoder).
 */
function textList(field: FieldDef, text: string): unknown {
  if (field.type === 'complex') return JSON.parse(text) as unknown;
  const items: string[] = [];
  let item = '';
  // As readStringList: a backslash escapes the next backslash or comma, and stays pending over any other character.
  let escaped = false;
  for (const c of text) {
    if (c !== '\\' && c !== ',') item += c;
    else if (escaped) [item, escaped] = [item + c, false];
    else if (c === '\\') escaped = true;
    else {
      items.push(item);
      item = '';
    }
  }
  return [...items, item];
}

/**
 * Check and normalise one value against its field; a wrong type is a 400 as on the real server.
 * `fromText`: Automation's properties, all text (DocumentHelper.setProperty, 2021 and 2023): ""
 * clears the field whatever its type, and a number that does not parse is 0 (LongType and
 * DoubleType.decode). Text for a number or a boolean is read as REST reads it too
 * (DocumentPropertiesJsonReader: parsed, a number that does not parse refused).
 */
function coerce(field: FieldDef, raw: unknown, key: string, fromText: boolean, resolveBlob: BlobResolver): unknown {
  if (raw === null || raw === undefined || (fromText && raw === '')) return null;
  if (field.list) {
    const items = fromText && typeof raw === 'string' ? textList(field, raw) : raw;
    if (!Array.isArray(items)) throw mismatch(key, raw);
    return items.map((item) => coerce({ ...field, list: false }, item, key, fromText, resolveBlob));
  }
  switch (field.type) {
    case 'string':
      if (typeof raw === 'object') throw mismatch(key, raw);
      return String(raw);
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      // Text is "true" in any case, or false: Automation's BooleanType.decode, REST's Boolean.parseBoolean.
      if (typeof raw === 'string') return raw.toLowerCase() === 'true';
      throw mismatch(key, raw);
    case 'long':
    case 'double': {
      const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw.trim()) : raw;
      if (typeof value === 'number' && !Number.isNaN(value) && (field.type === 'double' || Number.isInteger(value)))
        return value;
      // Automation's text that does not parse is 0 (LongType and DoubleType.decode); REST refuses it.
      if (fromText) return 0;
      throw mismatch(key, raw);
    }
    case 'date': {
      const time = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
      if (Number.isNaN(time)) throw mismatch(key, raw);
      return new Date(time).toISOString();
    }
    case 'blob':
      if (typeof raw !== 'object') throw mismatch(key, raw);
      return resolveBlob(raw as Record<string, unknown>) ?? UNCHANGED;
    case 'complex': {
      if (typeof raw !== 'object' || Array.isArray(raw)) throw mismatch(key, raw);
      const fields = field.fields as FieldDef[];
      const value = raw as Record<string, unknown>;
      return Object.fromEntries(
        fields
          .map((sub) => [sub.name, coerce(sub, value[sub.name], `${key}/${sub.name}`, fromText, resolveBlob)])
          .filter(([, v]) => v !== UNCHANGED),
      );
    }
  }
}

function mismatch(key: string, raw: unknown): RepositoryError {
  return new RepositoryError(400, `Unable to set value ${JSON.stringify(raw)} on property: ${key}: wrong type`);
}
