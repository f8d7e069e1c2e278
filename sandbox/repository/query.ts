import { parseQuery, NxqlSyntaxError, type Condition, type Literal, type Query } from '../../common/nxql/parse.js';
import { bisect, RepositoryError, type Actor, type Store, type StoredDoc } from './store.js';

const ECM_BOOLEANS = new Set([
  'ecm:isVersion',
  'ecm:isProxy',
  'ecm:isTrashed',
  'ecm:isCheckedIn',
  'ecm:isLatestVersion',
  'ecm:isLatestMajorVersion',
]);
const ECM_STRINGS = new Set([
  'ecm:uuid',
  'ecm:name',
  'ecm:primaryType',
  'ecm:currentLifeCycleState',
  'ecm:lockOwner',
  'ecm:parentId',
  'ecm:ancestorId',
  'ecm:path',
  'ecm:mixinType',
]);
const OPERATOR_LIMITS: Record<string, string[]> = {
  'ecm:path': ['=', '<>', 'startswith'],
  'ecm:parentId': ['=', '<>'],
  'ecm:ancestorId': ['=', '<>'],
  'ecm:mixinType': ['=', '<>', 'in'],
};

/** Query errors are 400s with the parser's message, never a crash. */
function invalid(message: string): RepositoryError {
  return new RepositoryError(400, `Failed to execute query: ${message}`);
}

function operatorOf(condition: Condition): string {
  return condition.kind === 'compare' ? condition.op : condition.kind;
}

function validate(store: Store, condition: Condition | undefined): void {
  if (condition === undefined) return;
  if (condition.kind === 'not') return validate(store, condition.operand);
  if (!('property' in condition)) {
    validate(store, condition.left);
    return validate(store, condition.right);
  }
  const { property } = condition;
  const allowed = OPERATOR_LIMITS[property];
  if (allowed && !allowed.includes(operatorOf(condition))) {
    throw invalid(`${property} does not support operator ${operatorOf(condition).toUpperCase()}`);
  }
  if (ECM_BOOLEANS.has(property)) {
    const values = condition.kind === 'compare' ? [condition.value] : condition.kind === 'in' ? condition.values : [];
    if (values.length === 0 || values.some((v) => v.kind !== 'number' || (v.value !== 0 && v.value !== 1))) {
      throw invalid(`${property} can only be compared to 0 or 1`);
    }
    return;
  }
  if (ECM_STRINGS.has(property)) return;
  if (store.registry.property(property.split('/')[0]) === undefined) throw invalid(`No such property: ${property}`);
}

/** One step of a property path: `*` and `*N` keep each list item, a name reads a complex field. */
function pathStep(value: unknown, part: string): unknown {
  if (/^\*\d*$/.test(part)) return value;
  // Object() boxes a scalar and turns null or undefined into {}: a field of either is undefined.
  return (Object(value) as Record<string, unknown>)[part];
}

/** Values of a property on a document: always a list, so that lists compare "any element". */
function valuesOf(store: Store, doc: StoredDoc, property: string): unknown[] {
  switch (property) {
    case 'ecm:uuid':
      return [doc.uid];
    case 'ecm:name':
      return [doc.name];
    case 'ecm:path':
      return [doc.path];
    case 'ecm:primaryType':
      return [doc.type];
    case 'ecm:parentId':
      return [doc.parentId];
    case 'ecm:ancestorId':
      return store.ancestorIds(doc);
    case 'ecm:mixinType':
      return store.facetsOf(doc).filter((f) => f !== 'Immutable');
    case 'ecm:currentLifeCycleState':
      return [doc.state];
    case 'ecm:lockOwner':
      return [null];
    // Nothing in the sandbox trashes, versions or proxies a document.
    case 'ecm:isTrashed':
    case 'ecm:isVersion':
    case 'ecm:isProxy':
    case 'ecm:isLatestVersion':
    case 'ecm:isLatestMajorVersion':
      return [0];
    case 'ecm:isCheckedIn':
      return [0];
    default: {
      const [key, ...rest] = property.split('/');
      let values: unknown[] = [doc.properties[key]];
      for (const part of rest) {
        values = values.flatMap((v) => (Array.isArray(v) ? v : [v])).map((v) => pathStep(v, part));
      }
      return values.flatMap((v) => (Array.isArray(v) ? v : [v])).map((v) => (v === undefined ? null : v));
    }
  }
}

function literalValue(literal: Literal): string | number {
  return literal.value;
}

/** Booleans compare with 1/0; everything else by its natural order. */
function compareValues(a: unknown, b: string | number): number {
  const left = typeof a === 'boolean' ? (a ? 1 : 0) : a;
  if (typeof left === 'number' && typeof b === 'number') return left - b;
  const l = String(left);
  const r = String(b);
  return l < r ? -1 : l > r ? 1 : 0;
}

function likeRegex(pattern: string, caseInsensitive: boolean): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\' && i + 1 < pattern.length) source += pattern[++i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '%') source += '.*';
    else if (ch === '_') source += '.';
    else source += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, caseInsensitive ? 'is' : 's');
}

function matches(store: Store, doc: StoredDoc, condition: Condition): boolean {
  switch (condition.kind) {
    case 'and':
      return matches(store, doc, condition.left) && matches(store, doc, condition.right);
    case 'or':
      return matches(store, doc, condition.left) || matches(store, doc, condition.right);
    case 'not':
      return !matches(store, doc, condition.operand);
    case 'null': {
      const present = valuesOf(store, doc, condition.property).some((v) => v !== null);
      return condition.negated ? present : !present;
    }
    case 'startswith': {
      const prefix = condition.prefix.replace(/\/+$/, '');
      if (condition.property === 'ecm:path') return doc.path.startsWith(`${prefix}/`);
      return valuesOf(store, doc, condition.property).some((v) => typeof v === 'string' && v.startsWith(prefix));
    }
    case 'in': {
      const values = valuesOf(store, doc, condition.property).filter((v) => v !== null);
      const found = values.some((v) => condition.values.some((l) => compareValues(v, literalValue(l)) === 0));
      return condition.negated ? !found && (values.length > 0 || condition.property === 'ecm:mixinType') : found;
    }
    case 'between': {
      const values = valuesOf(store, doc, condition.property).filter((v) => v !== null);
      const inside = values.some(
        (v) =>
          compareValues(v, literalValue(condition.low)) >= 0 && compareValues(v, literalValue(condition.high)) <= 0,
      );
      return values.length > 0 && (condition.negated ? !inside : inside);
    }
    case 'like': {
      const regex = likeRegex(condition.pattern, condition.caseInsensitive);
      const values = valuesOf(store, doc, condition.property).filter((v): v is string => typeof v === 'string');
      const found = values.some((v) => regex.test(v));
      return values.length > 0 && (condition.negated ? !found : found);
    }
    case 'compare': {
      const values = valuesOf(store, doc, condition.property);
      const literal = literalValue(condition.value);
      // A list "<>" means no element equals; an absent scalar matches no comparison.
      if (condition.op === '<>') {
        const present = values.filter((v) => v !== null);
        const listy =
          condition.property === 'ecm:mixinType' ||
          present.length !== 1 ||
          Array.isArray(doc.properties[condition.property]);
        return (listy || present.length > 0) && !present.some((v) => compareValues(v, literal) === 0);
      }
      return values.some((v) => v !== null && test(compareValues(v, literal), condition.op));
    }
  }
}

function test(order: number, op: string): boolean {
  switch (op) {
    case '=':
      return order === 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    default:
      return order >= 0;
  }
}

type Candidates = { size: number; docs: () => Iterable<StoredDoc> };

/** Smallest candidate set that the AND-ed conditions allow, from the store's indexes. */
function candidates(store: Store, query: Query): Candidates {
  const options: Candidates[] = [];
  const fromIds = (ids: Iterable<string>): Iterable<StoredDoc> =>
    [...ids].map((id) => store.get(id)).filter((d): d is StoredDoc => d !== undefined);
  const none = { size: 0, docs: () => [] };
  const one = (doc: StoredDoc | undefined): Candidates => (doc ? { size: 1, docs: () => [doc] } : none);
  for (const c of conjuncts(query.where)) {
    if (c.kind === 'startswith' && c.property === 'ecm:path') {
      const base = store.getByPath(c.prefix);
      if (!base) return none;
      options.push({ size: store.countDescendants(base.uid), docs: () => store.descendants(base.uid) });
    } else if (c.kind === 'compare' && c.op === '=' && c.property === 'ecm:ancestorId') {
      const base = store.get(String(c.value.value));
      if (!base) return none;
      options.push({ size: store.countDescendants(base.uid), docs: () => store.descendants(base.uid) });
    } else if (c.kind === 'compare' && c.op === '=' && c.property === 'ecm:uuid') {
      return one(store.get(String(c.value.value)));
    } else if (c.kind === 'compare' && c.op === '=' && c.property === 'ecm:path') {
      return one(store.getByPath(String(c.value.value)));
    } else if (c.kind === 'compare' && c.op === '=' && c.property === 'ecm:parentId') {
      const ids = store.childIds(String(c.value.value));
      options.push({ size: ids.size, docs: () => fromIds(ids) });
    } else {
      const narrowed = indexedIds(store, c);
      if (narrowed) options.push({ size: narrowed.size, docs: () => fromIds(narrowed.ids()) });
    }
  }
  const typed = query.types.filter((t) => t !== 'Document');
  if (typed.length === query.types.length) {
    // Sizes only: the documents are gathered only if this turns out to be the smallest set.
    const names = [...store.registry.types.keys()].filter((name) =>
      typed.some((t) => store.registry.isSubtypeOf(name, t)),
    );
    const size = names.reduce((sum, name) => sum + store.idsOfType(name).size, 0);
    options.push({ size, docs: () => fromIds(names.flatMap((name) => [...store.idsOfType(name)])) });
  }
  if (options.length === 0) return { size: Number.POSITIVE_INFINITY, docs: () => store.all() };
  options.sort((a, b) => a.size - b.size);
  return options[0];
}

function conjuncts(where: Condition | undefined): Condition[] {
  if (where === undefined) return [];
  return where.kind === 'and' ? [...conjuncts(where.left), ...conjuncts(where.right)] : [where];
}

/** Above this many candidates, a query ordered by uuid walks the store's uid order instead of sorting them all. */
const WALK_ABOVE = 1000;

/**
 * A keyset page (`ecm:uuid > 'x' … ORDER BY ecm:uuid`) over many candidates: walk the uids in
 * order from the key and stop once the page is full, so each page costs about its own size
 * however large the repository. The total is then unknown (-1, as a page provider that does
 * not count answers) unless the walk reached the end.
 */
function walkInUuidOrder(
  store: Store,
  query: Query,
  accept: (doc: StoredDoc) => boolean,
  page: { offset: number; limit: number },
): QueryResult {
  const uids = store.uidsInOrder();
  let i = 0;
  let end = uids.length;
  for (const c of conjuncts(query.where)) {
    // The keyset the pager sends, and a shard's range (`>=`, `<`), as an index range scan;
    // any other condition on the uuid is checked per document.
    if (c.kind !== 'compare' || c.property !== 'ecm:uuid') continue;
    const at = (after: boolean): number => bisect(uids, String(c.value.value), after);
    if (c.op === '>' || c.op === '>=') i = Math.max(i, at(c.op === '>'));
    if (c.op === '<') end = Math.min(end, at(false));
  }
  const entries: StoredDoc[] = [];
  let skipped = 0;
  for (; i < end && entries.length < page.limit; i++) {
    const doc = store.get(uids[i]) as StoredDoc;
    if (!accept(doc)) continue;
    if (skipped < page.offset) skipped++;
    else entries.push(doc);
  }
  // One match past the page is enough to know another page follows.
  for (; i < end; i++) if (accept(store.get(uids[i]) as StoredDoc)) return { total: -1, more: true, entries };
  return { total: skipped + entries.length, entries };
}

/** Ids from the indexes: their number (at most) now, the ids themselves only when asked. */
type IndexedIds = { size: number; ids: () => Iterable<string> };

const indexed = (ids: ReadonlySet<string>): IndexedIds => ({ size: ids.size, ids: () => ids });

/** Any of `parts`: sized by their sum, the union built only when read. */
const union = (parts: IndexedIds[]): IndexedIds => ({
  size: parts.reduce((sum, part) => sum + part.size, 0),
  ids: () => new Set(parts.flatMap((part) => [...part.ids()])),
});

/**
 * The ids that can meet `c`, from the store's indexes, as a database uses its indexes: a facet
 * or a value present or absent, the smaller side of an AND, the union of an OR whose sides are
 * both indexed (a task's "READY, or RETRY and due, or IN_PROGRESS and expired"; the intake's
 * "without the facet, or without docId", so 100,000 labelled documents are not walked for the
 * hundred new ones). The union is built only if it is the set the query reads; a large one is
 * walked in uuid order instead. Undefined when no index narrows it down.
 */
function indexedIds(store: Store, c: Condition): IndexedIds | undefined {
  if (c.kind === 'and' || c.kind === 'or') {
    const left = indexedIds(store, c.left);
    const right = indexedIds(store, c.right);
    if (c.kind === 'or') return left && right ? union([left, right]) : undefined;
    if (left === undefined || right === undefined) return left ?? right;
    return left.size <= right.size ? left : right;
  }
  if (c.kind === 'compare' && c.op === '=' && c.property === 'ecm:mixinType')
    return indexed(store.idsWithFacet(String(c.value.value)));
  // Immutable is not a mixin type to NXQL (valuesOf), so every document is "<> 'Immutable'".
  if (c.kind === 'compare' && c.op === '<>' && c.property === 'ecm:mixinType' && c.value.value !== 'Immutable')
    return indexed(store.idsWithoutFacet(String(c.value.value)));
  if (c.kind === 'null' && !c.negated && plainField(store, c.property) !== undefined)
    return indexed(store.idsWithoutValue(c.property));
  if ((c.kind === 'compare' && c.op === '=') || (c.kind === 'in' && !c.negated)) return indexedLookup(store, c);
  return undefined;
}

/** Equality on a plain string or boolean property uses the store's lazily built value index. */
type EqualityCondition = Extract<Condition, { kind: 'compare' | 'in' }>;

/** The field of a registered property addressed as a whole; undefined for a system property or a path into a complex value. */
function plainField(store: Store, property: string): { type: string } | undefined {
  if (property.startsWith('ecm:') || property.includes('/')) return undefined;
  return store.registry.property(property)?.field;
}

function indexedLookup(store: Store, c: EqualityCondition): IndexedIds | undefined {
  const field = plainField(store, c.property);
  if (field?.type !== 'string' && field?.type !== 'boolean') return undefined;
  const literals = c.kind === 'compare' ? [c.value] : c.values;
  const parts = literals.map((literal) =>
    indexed(store.idsWithValue(c.property, field.type === 'boolean' ? literal.value === 1 : String(literal.value))),
  );
  return parts.length === 1 ? parts[0] : union(parts);
}

export interface SortKey {
  property: string;
  descending: boolean;
}

const presence = (value: unknown): number => (value === null ? 0 : 1);

function compareDocs(store: Store, a: StoredDoc, b: StoredDoc, keys: SortKey[]): number {
  for (const key of keys) {
    const left = valuesOf(store, a, key.property)[0] ?? null;
    const right = valuesOf(store, b, key.property)[0] ?? null;
    // Absent values sort first; two absent values are equal.
    let order = presence(left) - presence(right);
    if (order === 0 && left !== null) order = compareValues(left, right as string | number);
    if (order !== 0) return key.descending ? -order : order;
  }
  return 0;
}

export interface QueryResult {
  total: number;
  /** With an unknown total (-1): a match follows the page. */
  more?: boolean;
  entries: StoredDoc[];
}

/**
 * Run an NXQL query for an actor: the caller's Browse permission filters results,
 * no implicit filters are added (versions, proxies and trash must be excluded by the query).
 */
export function runQuery(
  store: Store,
  actor: Actor,
  text: string,
  page: { offset: number; limit: number; sort?: SortKey[] },
): QueryResult {
  let query: Query;
  try {
    query = parseQuery(text);
  } catch (error) {
    throw invalid((error as NxqlSyntaxError).message);
  }
  for (const type of query.types) {
    if (type !== 'Document' && !store.registry.types.has(type)) throw invalid(`Unknown type: ${type}`);
  }
  validate(store, query.where);
  const typed = query.types.includes('Document') ? undefined : query.types;
  const browse = new Map<string, boolean>();
  const visible = (doc: StoredDoc): boolean => {
    if (actor.isAdministrator) return true;
    let allowed = browse.get(doc.uid);
    if (allowed === undefined) {
      allowed = store.can(actor, doc, 'Browse');
      browse.set(doc.uid, allowed);
    }
    return allowed;
  };
  const accept = (doc: StoredDoc): boolean =>
    (!typed || typed.some((t) => store.registry.isSubtypeOf(doc.type, t))) &&
    (!query.where || matches(store, doc, query.where)) &&
    visible(doc);
  const keys = page.sort && page.sort.length > 0 ? page.sort : query.orderBy;
  const byUuid = keys.length === 1 && keys[0].property === 'ecm:uuid' && !keys[0].descending;
  const candidate = candidates(store, query);
  if (byUuid && candidate.size > WALK_ABOVE) return walkInUuidOrder(store, query, accept, page);
  const found: StoredDoc[] = [];
  for (const doc of candidate.docs()) if (accept(doc)) found.push(doc);
  if (keys.length > 0) found.sort((a, b) => compareDocs(store, a, b, keys));
  return { total: found.length, entries: found.slice(page.offset, page.offset + page.limit) };
}
