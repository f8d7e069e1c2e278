import { KNOWN_PERMISSIONS, aceId, isBlock, type Ace, type Acl } from './acl.js';
import { runQuery, type SortKey } from './query.js';
import { RepositoryError, type Actor, type BlobResolver, type Store, type StoredDoc } from './store.js';

export interface OperationContext {
  store: Store;
  actor: Actor;
  users: ReadonlySet<string>;
  resolveBlob: BlobResolver;
  /** Documents the input designates, already resolved; empty for void input. */
  input: StoredDoc[];
  /** Whether the input was a list (`docs:`), so the output is a list too. */
  inputIsList: boolean;
  params: Record<string, unknown>;
}

export type OperationResult =
  | StoredDoc
  | StoredDoc[]
  | { page: ReturnType<typeof runQuery>; pageSize: number; pageIndex: number; paginated: boolean }
  | null;

export type Operation = (ctx: OperationContext) => OperationResult;

const str = (ctx: OperationContext, name: string): string | undefined => {
  const value = ctx.params[name];
  return value === undefined || value === null ? undefined : String(value);
};

function required(ctx: OperationContext, name: string): string {
  const value = str(ctx, name);
  if (value === undefined || value === '')
    throw new RepositoryError(400, `Failed to inject parameter '${name}'. Seems it is required.`);
  return value;
}

function eachDoc(ctx: OperationContext, fn: (doc: StoredDoc) => StoredDoc): StoredDoc | StoredDoc[] {
  if (ctx.input.length === 0) throw new RepositoryError(400, 'This operation needs a document as input');
  const out = ctx.input.map(fn);
  return ctx.inputIsList ? out : out[0];
}

/** The `properties` parameter: an object (read as JsonNodeToProperties reads it) or `key=value` lines. */
function propertiesParam(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') {
    return Object.fromEntries(
      value
        .split('\n')
        .filter((line) => line.includes('='))
        .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1)]),
    );
  }
  return jsonNodeToProperties(value);
}

/**
 * JsonNodeToProperties (nuxeo-automation-core, 2021 and 2023): a JSON object given for a `properties`
 * parameter, field by field as text: text as it is, `[]` as null, a list's items' text joined with
 * commas (an item that is an object is not modelled), anything else as its JSON (so null is the
 * text "null", a number its digits). Anything but an object has no adapter to Properties.
 */
function jsonNodeToProperties(value: unknown): Record<string, string | null> {
  if (typeof value !== 'object' || Array.isArray(value))
    throw new RepositoryError(500, 'No type adapter found for input and output Properties');
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, field]) => {
      if (Array.isArray(field)) return [key, field.length === 0 ? null : field.map(String).join(',')];
      return [key, typeof field === 'string' ? field : JSON.stringify(field)];
    }),
  );
}

function target(ctx: OperationContext, ref: string): StoredDoc {
  const doc = ref.startsWith('/') ? ctx.store.getByPath(ref) : ctx.store.get(ref);
  if (doc === undefined) throw new RepositoryError(404, ref);
  return doc;
}

/** A copy of the document's ACLs and the one named `aclName` in it, created first in the list when absent. */
function editableAcl(doc: StoredDoc, aclName: string): { acls: Acl[]; acl: Acl } {
  const acls: Acl[] = doc.acls.map((a) => ({ name: a.name, aces: [...a.aces] }));
  let acl = acls.find((a) => a.name === aclName);
  if (acl === undefined) {
    acl = { name: aclName, aces: [] };
    acls.unshift(acl);
  }
  return { acls, acl };
}

function withAce(ctx: OperationContext, doc: StoredDoc, aclName: string, ace: Ace, overwrite: boolean): StoredDoc {
  const { acls, acl } = editableAcl(doc, aclName);
  if (overwrite) acl.aces = acl.aces.filter((a) => a.username !== ace.username || a.permission !== ace.permission);
  const block = acl.aces.findIndex(isBlock);
  // New grants go before the blocking ACE so that they still count.
  if (block >= 0) acl.aces.splice(block, 0, ace);
  else acl.aces.push(ace);
  return ctx.store.setAcls(ctx.actor, doc, acls);
}

function checkPrincipals(ctx: OperationContext, names: string[]): void {
  const unknown = names.filter((n) => !ctx.users.has(n));
  if (unknown.length > 0) {
    throw new RepositoryError(
      400,
      `The following set of User or Group names do not exist: [${unknown.join(', ')}]. Please provide valid ones.`,
    );
  }
}

function checkPermissionName(permission: string): void {
  if (!KNOWN_PERMISSIONS.has(permission)) throw new RepositoryError(400, `Permission ${permission} is invalid.`);
}

const addFacet: Operation = (ctx) => {
  const facet = required(ctx, 'facet');
  return eachDoc(ctx, (doc) => ctx.store.addFacet(ctx.actor, doc, facet));
};

const removeFacet: Operation = (ctx) => {
  const facet = required(ctx, 'facet');
  return eachDoc(ctx, (doc) => ctx.store.removeFacet(ctx.actor, doc, facet));
};

const move: Operation = (ctx) => {
  const destination = target(ctx, required(ctx, 'target'));
  return eachDoc(ctx, (doc) => ctx.store.move(ctx.actor, doc, destination, str(ctx, 'name')));
};

/**
 * Unlike REST, Automation fails (500) on a property whose schema the document lacks
 * (DocumentHelper.setProperty: PropertyNotFoundException), when creating as when updating.
 */
function checkSchemas(ctx: OperationContext, doc: StoredDoc, properties: Record<string, unknown>): void {
  for (const key of Object.keys(properties)) {
    const prop = ctx.store.registry.property(key);
    if (prop === undefined || !ctx.store.schemasOf(doc).includes(prop.schema.name))
      throw new RepositoryError(500, `No such property: ${key}`);
  }
}

const create: Operation = (ctx) => {
  const type = required(ctx, 'type');
  const properties = propertiesParam(ctx.params.properties);
  return eachDoc(ctx, (parent) => {
    const input = { type, name: str(ctx, 'name') ?? 'Untitled', properties, rawName: true, fromText: true };
    const created = ctx.store.create(ctx.actor, parent, input, ctx.resolveBlob);
    // Checked once it exists (its type's schemas); the request's transaction undoes it.
    checkSchemas(ctx, created, properties);
    return created;
  });
};

const update: Operation = (ctx) => {
  const properties = propertiesParam(ctx.params.properties);
  return eachDoc(ctx, (doc) => {
    checkSchemas(ctx, doc, properties);
    return ctx.store.update(ctx.actor, doc, properties, ctx.resolveBlob, {
      changeToken: str(ctx, 'changeToken'),
      fromText: true,
    });
  });
};

const remove: Operation = (ctx) => {
  for (const doc of ctx.input) ctx.store.remove(ctx.actor, doc);
  return null;
};

/** Document.Trash (Nuxeo 10.2 and later): answers the trashed document. */
const trash: Operation = (ctx) => eachDoc(ctx, (doc) => ctx.store.trash(ctx.actor, doc));

const fetch: Operation = (ctx) => {
  const doc = target(ctx, required(ctx, 'value'));
  ctx.store.require(ctx.actor, doc, 'Read');
  return doc;
};

const setAce: Operation = (ctx) => {
  const user = required(ctx, 'user');
  const permission = required(ctx, 'permission');
  checkPrincipals(ctx, [user]);
  checkPermissionName(permission);
  const ace: Ace = {
    username: user,
    permission,
    granted: ctx.params.grant !== false && str(ctx, 'grant') !== 'false',
    creator: ctx.actor.name,
    begin: null,
    end: null,
  };
  return eachDoc(ctx, (doc) =>
    withAce(
      ctx,
      doc,
      str(ctx, 'acl') ?? 'local',
      ace,
      ctx.params.overwrite !== false && str(ctx, 'overwrite') !== 'false',
    ),
  );
};

const addPermission: Operation = (ctx) => {
  const listed = ctx.params.users;
  const users = Array.isArray(listed)
    ? listed.map(String)
    : [str(ctx, 'username') ?? str(ctx, 'user')].filter((u): u is string => u !== undefined);
  if (users.length === 0) throw new RepositoryError(400, "'users' or 'email' parameters must be set");
  const permission = required(ctx, 'permission');
  checkPermissionName(permission);
  checkPrincipals(ctx, users);
  const date = (name: string): string | null => {
    const value = str(ctx, name);
    return value === undefined ? null : new Date(value).toISOString();
  };
  const aclName = str(ctx, 'acl') ?? 'local';
  return eachDoc(ctx, (doc) => {
    let current = doc;
    if (ctx.params.blockInheritance === true || str(ctx, 'blockInheritance') === 'true')
      current = block(ctx, current, aclName);
    for (const username of users) {
      current = withAce(
        ctx,
        current,
        aclName,
        { username, permission, granted: true, creator: ctx.actor.name, begin: date('begin'), end: date('end') },
        false,
      );
    }
    return current;
  });
};

/** Block inheritance: grant Everything to the actor and administrators, then deny Everyone. */
function block(ctx: OperationContext, doc: StoredDoc, aclName: string): StoredDoc {
  const { acls, acl } = editableAcl(doc, aclName);
  if (acl.aces.some(isBlock)) return doc;
  const grant = (username: string): Ace => ({
    username,
    permission: 'Everything',
    granted: true,
    creator: ctx.actor.name,
    begin: null,
    end: null,
  });
  acl.aces.push(grant(ctx.actor.name), grant('administrators'), {
    username: 'Everyone',
    permission: 'Everything',
    granted: false,
    creator: ctx.actor.name,
    begin: null,
    end: null,
  });
  return ctx.store.setAcls(ctx.actor, doc, acls);
}

const blockInheritance: Operation = (ctx) => eachDoc(ctx, (doc) => block(ctx, doc, str(ctx, 'acl') ?? 'local'));

const removePermission: Operation = (ctx) => {
  const id = str(ctx, 'id');
  const user = str(ctx, 'user');
  const aclName = str(ctx, 'acl') ?? 'local';
  return eachDoc(ctx, (doc) => {
    const acls = doc.acls.map((a) => ({
      name: a.name,
      aces:
        a.name !== aclName
          ? a.aces
          : a.aces.filter((ace) => (id !== undefined ? aceId(ace) !== id : ace.username !== user)),
    }));
    return ctx.store.setAcls(ctx.actor, doc, acls);
  });
};

const query: Operation = (ctx) => {
  const pageSize = Number(str(ctx, 'pageSize') ?? '0');
  const pageIndex = Number(str(ctx, 'currentPageIndex') ?? str(ctx, 'page') ?? '0');
  const sortBy = str(ctx, 'sortBy');
  const orders = (str(ctx, 'sortOrder') ?? '').split(',');
  const sort: SortKey[] | undefined = sortBy
    ?.split(',')
    .map((property, i) => ({ property: property.trim(), descending: orders[i]?.trim().toLowerCase() !== 'asc' }));
  const limit = pageSize > 0 ? Math.min(pageSize, 1000) : 1000;
  const offset = pageSize > 0 ? pageIndex * limit : 0;
  try {
    const page = runQuery(ctx.store, ctx.actor, required(ctx, 'query'), { offset, limit, sort });
    return { page, pageSize: pageSize > 0 ? limit : 0, pageIndex, paginated: pageSize > 0 };
  } catch (error) {
    // Through Automation a bad query (the only thing runQuery rejects) surfaces as an OperationException (500).
    throw new RepositoryError(500, (error as RepositoryError).message);
  }
};

export const OPERATIONS: Record<string, Operation> = {
  'Document.AddFacet': addFacet,
  'Document.RemoveFacet': removeFacet,
  'Document.Move': move,
  'Document.Create': create,
  'Document.Update': update,
  'Document.Delete': remove,
  'Document.Trash': trash,
  'Document.Fetch': fetch,
  'Repository.GetDocument': fetch,
  'Document.AddACE': setAce,
  'Document.SetACE': setAce,
  'Document.AddPermission': addPermission,
  'Document.AddACL': addPermission,
  'Document.BlockPermissionInheritance': blockInheritance,
  'Document.RemovePermission': removePermission,
  'Repository.Query': query,
  'Document.Query': query,
};
