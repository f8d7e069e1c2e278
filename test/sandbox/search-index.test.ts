import t, { type Test } from 'tap';
import got from 'got';
import { RepositorySandbox } from '../../sandbox/repository/server.js';
import type { StoredDoc } from '../../sandbox/repository/store.js';

/** The repository sandbox's search, as a stock Nuxeo answers it from Elasticsearch: lagging, re-read, clamped. */

const NEVER_CAUGHT_UP = 3_600_000;

async function sandbox(t: Test, options: ConstructorParameters<typeof RepositorySandbox>[0] = {}) {
  const server = new RepositorySandbox(options);
  const url = await server.start();
  t.teardown(() => server.stop());
  const api = got.extend({
    prefixUrl: `${url}/api/v1`,
    username: 'Administrator',
    password: 'Administrator',
    responseType: 'json',
    throwHttpErrors: false,
  });
  const search = async (query: string, params: Record<string, string | number> = {}) =>
    (await api.get('search/execute', { searchParams: { query, ...params }, headers: { properties: 'dublincore' } }))
      .body as unknown as Record<string, any>;
  const create = async (name: string, headers: Record<string, string> = {}) =>
    (
      (
        await api.post('path/default-domain/workspaces', {
          json: { 'entity-type': 'document', type: 'File', name, properties: { 'dc:title': name } },
          headers,
        })
      ).body as unknown as { uid: string }
    ).uid;
  return { server, api, search, create };
}

t.test(
  'a write reaches the search after the index lag; nx-es-sync: true makes it searchable before the answer',
  async (t) => {
    const { server, search, create, api } = await sandbox(t, { searchLagMs: NEVER_CAUGHT_UP });
    const query = "SELECT * FROM File WHERE dc:title LIKE 'doc-%'";
    await create('doc-1');
    t.equal((await search(query)).resultsCount, 0, 'not searchable yet');
    const synced = await create('doc-2', { 'nx-es-sync': 'true' });
    t.same(
      (await search(query)).entries.map((e: { uid: string }) => e.uid),
      [synced],
      'the synced write is, at once',
    );
    await api.put(`id/${synced}`, {
      json: { 'entity-type': 'document', uid: synced, properties: { 'dc:description': 'changed' } },
      headers: { NX_ES_SYNC: 'TRUE' },
    });
    t.equal(
      (await search("SELECT * FROM File WHERE dc:description = 'changed'")).resultsCount,
      1,
      'the older header name, in any case',
    );
    server.index.catchUp();
    t.equal((await search(query)).resultsCount, 2, 'once the index has caught up, both');
  },
);

t.test('a write without the header is found once its lag has passed', async (t) => {
  const { search, create } = await sandbox(t, { searchLagMs: 50 });
  await create('later');
  const query = "SELECT * FROM File WHERE dc:title = 'later'";
  // Waits for the index, not for a guess at how long it takes: the deadline only bounds a failure.
  const deadline = Date.now() + 30_000;
  while ((await search(query)).resultsCount === 0) {
    if (Date.now() > deadline) throw new Error('never indexed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.pass('indexed');
});

t.test(
  'hits are read again from the repository: current values, deleted ones dropped with the count unchanged',
  async (t) => {
    const { server, search, create, api } = await sandbox(t, { searchLagMs: NEVER_CAUGHT_UP });
    const uids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) uids.push(await create(name, { 'nx-es-sync': 'true' }));
    const [deleted, renamed] = [...uids].sort();
    await api.put(`id/${renamed}`, {
      json: { 'entity-type': 'document', uid: renamed, properties: { 'dc:title': 'renamed' } },
    });
    server.store.remove(server.actor(), server.store.get(deleted) as StoredDoc);
    const page = await search("SELECT * FROM File WHERE dc:title IN ('a', 'b', 'c', 'd') ORDER BY ecm:uuid", {
      pageSize: 3,
    });
    t.equal(page.resultsCount, 4, "the count is the index's");
    t.equal(page.currentPageSize, 2, 'the first of the three hits is gone: the page is short');
    t.equal(page.isNextPageAvailable, true, 'and a next page follows, from the count');
    t.notOk(
      page.entries.some((e: { uid: string }) => e.uid === deleted),
      'the deleted document is dropped',
    );
    t.equal(page.entries[0].uid, renamed);
    t.equal(page.entries[0].properties['dc:title'], 'renamed', 'matched on its old title, returned with its new one');
  },
);

t.test(
  "a page size above the server's maximum is clamped in what comes back, not in what the answer says",
  async (t) => {
    const { search, create } = await sandbox(t, { maxPageSize: 2 });
    for (const name of ['a', 'b', 'c']) await create(name);
    const page = await search("SELECT * FROM File WHERE dc:title IN ('a', 'b', 'c')", { pageSize: 5 });
    t.equal(page.entries.length, 2, 'two, the maximum');
    t.match(
      page,
      { pageSize: 5, maxPageSize: 2, resultsCount: 3, isNextPageAvailable: false },
      'the flags are worked out for the five asked: no next page, though one document is left',
    );
    const second = await search("SELECT * FROM File WHERE dc:title IN ('a', 'b', 'c')", {
      pageSize: 5,
      currentPageIndex: 1,
    });
    t.equal(second.entries.length, 0, 'and page 1 starts at 5: the third document cannot be reached by page index');
  },
);

t.test('Elasticsearch pages no further than its result window', async (t) => {
  const { search, create } = await sandbox(t);
  for (const name of ['a', 'b', 'c']) await create(name);
  const query = "SELECT * FROM File WHERE dc:title IN ('a', 'b', 'c')";
  t.equal(
    (await search(query, { pageSize: 1, offset: 9_998 })).isNextPageAvailable,
    false,
    'offset + 2 × pageSize beyond 10,000: no next page',
  );
  t.equal((await search(query, { pageSize: 1 })).isNextPageAvailable, true);
});

t.test("a request line and headers over 8 KB are refused with Tomcat's 400 page, not a Nuxeo error", async (t) => {
  const { api } = await sandbox(t);
  const long = `SELECT * FROM File WHERE dc:title IN (${Array.from({ length: 800 }, (_, i) => `'title-${i}'`).join(', ')})`;
  const refused = await api.get('search/execute', { searchParams: { query: long }, responseType: 'text' });
  t.equal(refused.statusCode, 400);
  t.match(refused.body, '<h1>HTTP Status 400 – Bad Request</h1>');
  const fits = await api.get('search/execute', {
    searchParams: { query: long.slice(0, 4000).replace(/, '[^']*$/, ')') },
  });
  t.equal(fits.statusCode, 200, 'a query of half that is answered');
});
