import t from 'tap';
import Nuxeo from 'nuxeo';
import { RepositorySandbox } from '../../sandbox/repository/server.js';

// The official client must work against the sandbox for the operations it shares with the job.
t.test('the official nuxeo npm client works against the sandbox', async (t) => {
  const sandbox = new RepositorySandbox();
  const baseURL = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const nuxeo = new Nuxeo({ baseURL, auth: { method: 'basic', username: 'Administrator', password: 'Administrator' } });
  await nuxeo.connect();
  t.equal(nuxeo.user.id, 'Administrator', 'connect() logs in and fetches the user');

  const repository = nuxeo.repository().schemas(['dublincore', 'file']);
  const created = await repository.create('/default-domain/workspaces', {
    'entity-type': 'document',
    type: 'File',
    name: 'client-doc',
    properties: { 'dc:title': 'Client doc' },
  });
  t.equal(created.path, '/default-domain/workspaces/client-doc');
  t.equal(created.properties['dc:title'], 'Client doc');

  const fetched = await repository.fetch(created.uid);
  t.equal(fetched.title, 'Client doc', 'fetch by id');
  fetched.set({ 'dc:description': 'changed' });
  const saved = await fetched.save();
  t.equal(saved.properties['dc:description'], 'changed', 'update through Document#save');

  const blob = new Nuxeo.Blob({ content: Buffer.from('hello'), name: 'hello.txt', mimeType: 'text/plain', size: 5 });
  const uploaded = await nuxeo.batchUpload().upload(blob);
  const withBlob = await repository.update({
    'entity-type': 'document',
    uid: created.uid,
    properties: { 'file:content': uploaded.blob },
  });
  t.equal(withBlob.properties['file:content'].name, 'hello.txt', 'uploaded blob attached with a PUT');
  const download = await repository
    .fetch(created.uid)
    .then((doc: { fetchBlob: () => Promise<Response> }) => doc.fetchBlob());
  t.equal(await download.text(), 'hello', 'blob downloads');

  const withFacet = await nuxeo
    .operation('Document.AddFacet')
    .input(created.uid)
    .params({ facet: 'fct_erp_http_content' })
    .schemas(['erp_http_content'])
    .execute();
  t.ok(withFacet.facets.includes('fct_erp_http_content'), 'facet added through Automation');
  t.ok('erpHttpContent:docId' in withFacet.properties, 'the facet brings its schema');

  for (let i = 0; i < 5; i++) {
    await repository.create('/default-domain/workspaces', {
      'entity-type': 'document',
      type: 'Note',
      name: `note-${i}`,
      properties: { 'dc:title': `Note ${i}` },
    });
  }
  const page = await repository.query({
    query: "SELECT * FROM Note WHERE ecm:path STARTSWITH '/default-domain/workspaces'",
    pageSize: 2,
    currentPageIndex: 1,
    sortBy: 'dc:title',
    sortOrder: 'asc',
  });
  t.equal(page.resultsCount, 5);
  t.same(
    page.entries.map((d: { title: string }) => d.title),
    ['Note 2', 'Note 3'],
    'second page in ascending order',
  );
  t.equal(page.isNextPageAvailable, true);

  await repository.delete(created.uid);
  const gone = await repository.fetch(created.uid).catch((e: { response?: { status: number } }) => e.response?.status);
  t.equal(gone, 404, 'deleted document is gone');
});
