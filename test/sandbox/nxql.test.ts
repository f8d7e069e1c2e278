import t from 'tap';
import got from 'got';
import { RepositorySandbox } from '../../sandbox/repository/server.js';
import { NO_BLOBS } from '../../sandbox/repository/store.js';
import { nxqlList, nxqlString } from '../../src/nxql/literal.js';

/** The NXQL subset over HTTP: each query and the names it must find, or the 400 it must give. */
const WS = '/default-domain/workspaces';

t.test('NXQL operators over the search endpoint', async (t) => {
  const sandbox = new RepositorySandbox();
  const base = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const actor = sandbox.actor();
  const ws = sandbox.store.getByPath(WS)!;
  const make = (parent: typeof ws, type: string, name: string, properties: Record<string, unknown>) =>
    sandbox.store.create(actor, parent, { type, name, properties }, NO_BLOBS);
  const a = make(ws, 'File', 'a', {
    'dc:title': 'Alpha',
    'dc:subjects': ['x', 'y'],
    'dc:valid': '2024-01-15T08:00:00Z',
    'dc:description': 'first',
  });
  make(ws, 'File', 'b', { 'dc:title': 'beta', 'dc:valid': '2025-06-01T10:00:00Z', 'common:size': 5 });
  const folder = make(ws, 'Folder', 'f', {});
  make(folder, 'Note', 'c', { 'dc:title': 'Gamma_1%', 'dc:subjects': ['y'] });
  sandbox.store.addFacet(actor, a, 'fct_erp_http_content');
  sandbox.store.update(
    actor,
    sandbox.store.get(a.uid)!,
    { 'erpHttpContent:docId': a.uid, 'erpHttpContent:scanPerformed': false },
    NO_BLOBS,
    {},
  );

  const search = (query: string, extra: Record<string, string | number> = {}) =>
    got(`${base}/api/v1/search/execute`, {
      username: 'Administrator',
      password: 'Administrator',
      throwHttpErrors: false,
      responseType: 'json',
      searchParams: { query, pageSize: 100, ...extra },
    });
  const names = async (where: string, from = 'File, Note') => {
    const res = await search(`SELECT * FROM ${from} WHERE ${where}`);
    t.equal(res.statusCode, 200, where);
    return ((res.body as any).entries as Array<{ path: string }>).map((d) => d.path.split('/').pop()).sort();
  };
  const cases: Array<[string, string[]]> = [
    ["dc:title = 'Alpha'", ['a']],
    ["dc:title != 'Alpha'", ['b', 'c']],
    ["dc:title <> 'Alpha' AND NOT dc:title = 'beta'", ['c']],
    ["dc:title < 'beta'", ['a', 'c']],
    ["dc:title <= 'beta'", ['a', 'b', 'c']],
    ["dc:title > 'Alpha'", ['b', 'c']],
    ["dc:title >= 'beta'", ['b']],
    ["dc:title IN ('Alpha', 'beta')", ['a', 'b']],
    [`dc:title NOT IN ${nxqlList(['Alpha'])}`, ['b', 'c']],
    ["dc:title LIKE 'Al%'", ['a']],
    ["dc:title LIKE 'gamma%'", []],
    ["dc:title ILIKE 'gamma%'", ['c']],
    ["dc:title LIKE 'Gamma\\_1\\%'", ['c']],
    ["dc:title LIKE '_eta'", ['b']],
    ["dc:title NOT LIKE 'Al%'", ['b', 'c']],
    ['dc:description IS NULL', ['b', 'c']],
    ['dc:description IS NOT NULL', ['a']],
    ["dc:subjects = 'y'", ['a', 'c']],
    ["dc:subjects/* = 'x'", ['a']],
    ["dc:subjects <> 'x'", ['b', 'c']],
    ["dc:valid >= DATE '2025-01-01'", ['b']],
    ["dc:valid < TIMESTAMP '2024-01-15 09:00:00+02:00'", []],
    ["dc:valid BETWEEN DATE '2024-01-01' AND DATE '2024-12-31'", ['a']],
    ["dc:valid NOT BETWEEN DATE '2024-01-01' AND DATE '2024-12-31'", ['b']],
    ['common:size = 5', ['b']],
    ["common:size > 4 OR (dc:title = 'Alpha')", ['a', 'b']],
    // Index-narrowed: an OR of ANDs whose sides are indexed, and one side of an AND not.
    ["(dc:title = 'Alpha' AND dc:description = 'first') OR (dc:title = 'beta' AND common:size = 5)", ['a', 'b']],
    ["(dc:title = 'Alpha' AND dc:description = 'other') OR dc:title IN ('beta', 'Gamma_1%')", ['b', 'c']],
    ["(common:size > 4 AND dc:title = 'beta') OR dc:title = 'Alpha'", ['a', 'b']],
    ["ecm:primaryType = 'Note'", ['c']],
    [`ecm:parentId = '${folder.uid}'`, ['c']],
    [`ecm:ancestorId = '${folder.uid}'`, ['c']],
    [`ecm:ancestorId = '${ws.uid}' AND ecm:ancestorId <> '${folder.uid}'`, ['a', 'b']],
    ["ecm:ancestorId = 'nope'", []],
    [`ecm:uuid = '${a.uid}'`, ['a']],
    ["ecm:uuid = 'nope'", []],
    [`ecm:path = '${WS}/f/c'`, ['c']],
    ["ecm:path = '/nope'", []],
    [`ecm:path STARTSWITH '${WS}/f/'`, ['c']],
    ["ecm:path STARTSWITH '/nope'", []],
    ["ecm:name STARTSWITH 'b'", ['b']],
    ["ecm:mixinType = 'fct_erp_http_content'", ['a']],
    ["ecm:mixinType <> 'fct_erp_http_content'", ['b', 'c']],
    ["ecm:mixinType NOT IN ('fct_erp_http_content', 'Folderish')", ['b', 'c']],
    ['erpHttpContent:scanPerformed = 0', ['a']],
    ['erpHttpContent:docId IS NULL', ['b', 'c']],
    ['dc:subjects IS NULL', ['b']],
    ['dc:title/x IS NULL', ['a', 'b', 'c']],
    ["ecm:mixinType <> 'Immutable'", ['a', 'b', 'c']],
    // The intake's "not labelled yet", narrowed by the absence indexes.
    ["ecm:mixinType <> 'fct_erp_http_content' OR erpHttpContent:docId IS NULL", ['b', 'c']],
    ['ecm:isTrashed = 0 AND ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isCheckedIn = 0', ['a', 'b', 'c']],
    ["ecm:currentLifeCycleState = 'project'", ['a', 'b', 'c']],
    ['ecm:lockOwner IS NULL', ['a', 'b', 'c']],
    ['ecm:isTrashed IN (0)', ['a', 'b', 'c']],
    ['erpHttpContent:scanPerformed = 1', []],
    ['erpHttpContent:scanPerformed IN (0, 1)', ['a']],
    ["dc:subjects/*1 = 'y'", ['a', 'c']],
    ["dc:title/x = 'y'", []],
    ["dc:description NOT IN ('zzz')", ['a']],
    ["ecm:mixinType = 'fct_nope'", []],
  ];
  for (const [where, expected] of cases) t.same(await names(where), expected, where);
  sandbox.store.update(actor, sandbox.store.get(a.uid)!, { 'erpHttpContent:scanPerformed': true }, NO_BLOBS, {});
  t.same(await names('erpHttpContent:scanPerformed = 1'), ['a'], 'true compares as 1');
  t.same(await names("dc:description/x = 'y'"), [], 'a path into an absent value');
  t.same(await names("ecm:name = 'f'", 'Document'), ['f'], 'FROM Document includes folders');
  t.same(await names("dc:title = 'Alpha'", 'Document, Folder'), ['a'], 'several types');
  t.same(await names('ecm:isProxy = 0', 'Note'), ['c']);

  const ordered = await search(
    `SELECT * FROM File, Note WHERE ecm:path STARTSWITH '${WS}' ORDER BY dc:title DESC, ecm:name`,
  );
  t.same(
    (ordered.body as any).entries.map((d: any) => d.title),
    ['beta', 'Gamma_1%', 'Alpha'],
    'ORDER BY in the query, by code point',
  );
  const byDescription = await search('SELECT * FROM File, Note Order By dc:description asc');
  t.same(
    (byDescription.body as any).entries.map((d: any) => d.title),
    ['beta', 'Gamma_1%', 'Alpha'],
    'absent values sort first',
  );
  const thenByName = await search('SELECT * FROM File, Note ORDER BY dc:description, ecm:name DESC');
  t.same(
    (thenByName.body as any).entries.map((d: any) => d.title),
    ['Gamma_1%', 'beta', 'Alpha'],
    'two absent values are equal: the next key decides',
  );
  const offset = await search('SELECT * FROM File', { offset: 1, sortBy: 'ecm:name', sortOrder: 'asc' });
  t.same(
    (offset.body as any).entries.map((d: any) => d.title),
    ['beta'],
    'offset skips',
  );

  const invalid: Array<[string, RegExp]> = [
    ["SELECT * FROM File WHERE dc:title = 'open", /unterminated string/],
    ['SELECT * FROM File WHERE dc:title = #', /unexpected character '#'/],
    ["SELECT * FROM File WHERE dc:valid > DATE '2024-1-1'", /invalid DATE literal/],
    ["SELECT * FROM File WHERE dc:valid > TIMESTAMP 'soon'", /invalid TIMESTAMP literal/],
    ['SELECT * FROM File WHERE dc:title', /expected an operator/],
    ['SELECT * FROM File WHERE dc:title = ', /expected a literal/],
    ['SELECT * FROM File WHERE dc:title STARTSWITH 3', /expected a string literal/],
    ['SELECT * FROM File WHERE (dc:title IS NULL', /expected '\)'/],
    ['SELECT * FROM File WHERE dc:title IS NULL dc:title', /expected end of query/],
    ['SELECT * FROM File WHERE = 1', /expected a property name/],
    ['Select * From File Where dc:title iS NULL', /expected an operator/],
    ['SELECT * FROM Nope', /Unknown type: Nope/],
    ['SELECT * FROM File WHERE nope:nope = 1', /No such property: nope:nope/],
    ['SELECT * FROM File WHERE ecm:isTrashed = 2', /can only be compared to 0 or 1/],
    ['SELECT * FROM File WHERE ecm:isTrashed IS NULL', /can only be compared to 0 or 1/],
    ["SELECT * FROM File WHERE ecm:path LIKE '/a%'", /ecm:path does not support operator LIKE/],
  ];
  for (const [query, message] of invalid) {
    const res = await search(query);
    t.equal(res.statusCode, 400, query);
    t.match((res.body as any).message, message, query);
  }
  t.equal(nxqlString("a'b\\c"), "'a\\'b\\\\c'", 'quote and backslash are escaped');
});

t.test(
  'a large result ordered by uuid: pages by index or offset as usual; the total is -1 (unknown) until the last page',
  async (t) => {
    const sandbox = new RepositorySandbox();
    const base = await sandbox.start();
    t.teardown(() => sandbox.stop());
    const actor = sandbox.actor();
    const folder = sandbox.store.create(
      actor,
      sandbox.store.getByPath(WS)!,
      { type: 'Folder', name: 'many', properties: {} },
      NO_BLOBS,
    );
    const uids = Array.from(
      { length: 1200 },
      (_, i) => sandbox.store.create(actor, folder, { type: 'File', name: `f${i}`, properties: {} }, NO_BLOBS).uid,
    ).sort();
    const page = async (index: number) =>
      (
        await got(`${base}/api/v1/search/execute`, {
          username: 'Administrator',
          password: 'Administrator',
          responseType: 'json',
          searchParams: {
            query: `SELECT * FROM File WHERE ecm:path STARTSWITH '${WS}/many' ORDER BY ecm:uuid`,
            pageSize: 500,
            currentPageIndex: index,
          },
        })
      ).body as any;
    const second = await page(1);
    t.same(
      second.entries.map((d: any) => d.uid),
      uids.slice(500, 1000),
    );
    t.same([second.resultsCount, second.isNextPageAvailable], [-1, true], 'more may follow');
    const last = await page(2);
    t.same(
      last.entries.map((d: any) => d.uid),
      uids.slice(1000),
    );
    t.same(
      [last.resultsCount, last.isNextPageAvailable, last.numberOfPages],
      [1200, false, 3],
      'the last page knows the total',
    );
  },
);

t.test(
  'the indexes follow every write: facets added and removed, values set and cleared, moves and deletions',
  async (t) => {
    const sandbox = new RepositorySandbox();
    const base = await sandbox.start();
    t.teardown(() => sandbox.stop());
    const { store } = sandbox;
    const actor = sandbox.actor();
    const ws = store.getByPath(WS)!;
    const folder = store.create(actor, ws, { type: 'Folder', name: 'in', properties: {} }, NO_BLOBS);
    const make = (name: string) =>
      store.create(actor, ws, { type: 'File', name, properties: { 'dc:title': name } }, NO_BLOBS);
    const names = async (where: string) => {
      const res = await got(`${base}/api/v1/search/execute`, {
        username: 'Administrator',
        password: 'Administrator',
        responseType: 'json',
        searchParams: { query: `SELECT * FROM File WHERE ${where}`, pageSize: 100 },
      });
      return ((res.body as any).entries as Array<{ path: string }>).map((d) => d.path.split('/').pop()).sort();
    };
    const unlabelled = "ecm:mixinType <> 'fct_erp_http_content' OR erpHttpContent:docId IS NULL";
    const byStatus = "erpTaskStatus:status = 'READY'";
    const [a, b] = [make('a'), make('b')];
    t.same(await names(unlabelled), ['a', 'b'], 'both new: the indexes are built now');
    t.same(await names(byStatus), []);

    const labelled = (uid: string) =>
      store.update(
        actor,
        store.addFacet(actor, store.addFacet(actor, store.get(uid)!, 'fct_erp_http_content'), 'fct_erp_task_status'),
        { 'erpHttpContent:docId': uid, 'erpTaskStatus:status': 'READY' },
        NO_BLOBS,
      );
    labelled(a.uid);
    t.same(await names(unlabelled), ['b'], 'a labelled document leaves the absence indexes');
    t.same(await names(byStatus), ['a'], 'and joins the value index');
    make('c');
    t.same(await names(unlabelled), ['b', 'c'], 'a document created after the indexes were built is in them');

    store.update(
      actor,
      store.get(a.uid)!,
      { 'erpHttpContent:docId': null, 'dc:description': 'unchanged status' },
      NO_BLOBS,
    );
    t.same(await names(unlabelled), ['a', 'b', 'c'], 'a cleared value is absent again');
    t.same(await names(byStatus), ['a'], 'a value not written stays indexed');
    store.removeFacet(actor, store.get(a.uid)!, 'fct_erp_task_status');
    t.same(await names(byStatus), [], 'a removed facet takes its values out of the index');

    labelled(b.uid);
    store.move(actor, store.get(b.uid)!, folder);
    t.same(await names(unlabelled), ['a', 'c'], 'a moved document keeps its facets and values');
    t.same(await names(`${byStatus} AND ecm:path STARTSWITH '${WS}/in'`), ['b']);
    store.remove(actor, store.get(b.uid)!);
    store.remove(actor, store.get(a.uid)!);
    t.same(await names(`${unlabelled} OR ${byStatus}`), ['c'], 'deleted documents leave every index');
  },
);
