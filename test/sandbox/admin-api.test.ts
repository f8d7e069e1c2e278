import t, { type Test } from 'tap';
import got, { type Got } from 'got';
import { RepositorySandbox } from '../../sandbox/repository/server.js';
import { NO_BLOBS } from '../../sandbox/repository/store.js';

/** What an administrator does by hand to set the feature up, over the sandbox's HTTP API. */
const WS = '/default-domain/workspaces';

type Json = any;

async function setUp(t: Test): Promise<{
  sandbox: RepositorySandbox;
  base: string;
  api: Got;
  op: (name: string, body: Json, headers?: Record<string, string>) => Promise<{ statusCode: number; body: Json }>;
}> {
  const sandbox = new RepositorySandbox({ users: { jdoe: { password: 'jdoe', groups: ['members'] } } });
  const base = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const api = got.extend({
    prefixUrl: `${base}/api/v1`,
    username: 'Administrator',
    password: 'Administrator',
    responseType: 'json',
    throwHttpErrors: false,
    headers: { properties: '*' },
  });
  const op = async (name: string, body: Json, headers: Record<string, string> = {}) => {
    const res = await api.post(`automation/${name}`, { json: body, headers });
    return { statusCode: res.statusCode, body: res.body as Json };
  };
  return { sandbox, base, api, op };
}

t.test('ACL operations through Automation', async (t) => {
  const { api, op } = await setUp(t);
  const folder = (await op('Document.Create', { input: WS, params: { type: 'Folder', name: 'admin' } })).body;
  t.equal(folder.path, `${WS}/admin`, 'Document.Create keeps the name as given');

  const acl = async () => ((await api.get(`id/${folder.uid}/@acl`)).body as Json).acl as Json[];
  const added = await op('Document.AddPermission', {
    input: folder.uid,
    params: {
      users: ['jdoe'],
      permission: 'Read',
      blockInheritance: true,
      begin: '2020-01-01T00:00:00Z',
      end: '2999-01-01T00:00:00Z',
    },
  });
  t.equal(added.statusCode, 200);
  const local = (await acl()).find((a) => a.name === 'local');
  t.same(
    local.ace.map((a: Json) => `${a.username}:${a.permission}:${a.granted}`),
    ['Administrator:Everything:true', 'administrators:Everything:true', 'jdoe:Read:true', 'Everyone:Everything:false'],
    'blocking adds grants for the actor and administrators, then the new grant before the deny',
  );
  t.equal(local.ace[2].status, 'effective');

  const jdoe = got.extend({
    prefixUrl: api.defaults.options.prefixUrl,
    username: 'jdoe',
    password: 'jdoe',
    throwHttpErrors: false,
  });
  t.equal((await jdoe.get(`id/${folder.uid}`)).statusCode, 200, 'the grant lets the member in');

  const again = await op('Document.BlockPermissionInheritance', { input: folder.uid, params: {} });
  t.equal(again.body.uid, folder.uid, 'blocking twice changes nothing');
  t.equal((await acl()).find((a) => a.name === 'local').ace.length, 4);

  const id = local.ace[2].id as string;
  await op('Document.RemovePermission', { input: folder.uid, params: { id } });
  t.equal((await jdoe.get(`id/${folder.uid}`)).statusCode, 403, 'removing the ACE by id shuts the member out');

  await op('Document.SetACE', { input: folder.uid, params: { user: 'jdoe', permission: 'ReadWrite', acl: 'local' } });
  t.equal((await jdoe.get(`id/${folder.uid}`)).statusCode, 200, 'SetACE grants');
  const secured = await jdoe.put(`id/${folder.uid}`, {
    json: { properties: { 'dc:creator': 'jdoe' } },
    responseType: 'json',
  });
  t.equal(secured.statusCode, 400, 'only administrators set the secured dublincore fields');
  t.match((secured.body as Json).message, /Cannot set the value of property: dc:creator since it is readonly/);
  await op('Document.SetACE', { input: folder.uid, params: { user: 'jdoe', permission: 'ReadWrite', grant: 'false' } });
  t.equal(
    (await jdoe.get(`id/${folder.uid}`)).statusCode,
    403,
    'SetACE with grant false overwrites the grant with a deny',
  );
  await op('Document.RemovePermission', { input: folder.uid, params: { user: 'jdoe' } });
  t.notOk(
    (await acl()).find((a) => a.name === 'local').ace.some((a: Json) => a.username === 'jdoe'),
    'RemovePermission by user',
  );

  const other = await op('Document.AddPermission', {
    input: folder.uid,
    params: { username: 'members', permission: 'Read', acl: 'extra', end: '2000-01-01T00:00:00Z' },
  });
  t.equal(other.statusCode, 200);
  const extra = (await acl()).find((a) => a.name === 'extra');
  t.equal(extra.ace[0].status, 'archived', 'an ACE that ended is archived');

  await op('Document.AddPermission', {
    input: folder.uid,
    params: { users: ['jdoe'], permission: 'Write', begin: '2999-01-01T00:00:00Z' },
  });
  t.equal(
    (await acl()).find((a: Json) => a.name === 'local').ace.find((a: Json) => a.permission === 'Write').status,
    'pending',
    'an ACE that starts later is pending',
  );
  t.equal(
    (await jdoe.put(`id/${folder.uid}`, { json: { properties: { 'dc:title': 'x' } } })).statusCode,
    403,
    '…and grants nothing yet',
  );
  await op('Document.RemovePermission', { input: folder.uid, params: { user: 'members', acl: 'extra' } });
  const after = await acl();
  t.equal(after.find((a: Json) => a.name === 'extra').ace.length, 0, 'RemovePermission works on the named ACL…');
  t.ok(
    after.find((a: Json) => a.name === 'local').ace.some((a: Json) => a.username === 'jdoe'),
    '…and leaves the others alone',
  );
  const root = await op('Document.AddPermission', { input: '/', params: { users: ['jdoe'], permission: 'Read' } });
  t.equal(root.body.type, 'Root', 'the root, which has no dublincore, takes ACEs too');

  t.equal(
    (await op('Document.AddPermission', { input: folder.uid, params: { users: ['ghost'], permission: 'Read' } }))
      .statusCode,
    400,
    'unknown user',
  );
  t.equal(
    (await op('Document.AddPermission', { input: folder.uid, params: { permission: 'Read' } })).statusCode,
    400,
    'no user',
  );
  t.equal(
    (await op('Document.SetACE', { input: folder.uid, params: { user: 'jdoe', permission: 'Fly' } })).statusCode,
    400,
    'unknown permission',
  );
  t.equal(
    (await op('Document.SetACE', { input: folder.uid, params: { user: 'jdoe' } })).statusCode,
    400,
    'missing permission',
  );
});

t.test('document operations through Automation', async (t) => {
  const { api, op, sandbox } = await setUp(t);
  const file = (
    await op('Document.Create', {
      input: `doc:${WS}`,
      params: { type: 'File', name: 'a.pdf', properties: 'dc:title=Alpha\ndc:subjects=x\\,y,z\nignored line' },
    })
  ).body;
  t.equal(file.properties['dc:title'], 'Alpha', 'key=value lines set text properties');
  t.same(file.properties['dc:subjects'], ['x,y', 'z'], 'a list from text: split at commas, a backslash escaping one');

  const updated = await op('Document.Update', {
    input: file.uid,
    params: {
      properties: { 'dc:description': 'desc', 'dc:title': null, 'dc:subjects': ['a', 'b'], 'uid:major_version': 2 },
    },
  });
  t.equal(updated.body.properties['dc:description'], 'desc');
  t.equal(updated.body.properties['dc:title'], 'null', 'a JSON null is the text "null" (JsonNodeToProperties)');
  t.same(updated.body.properties['dc:subjects'], ['a', 'b'], 'a list in the properties object');
  t.equal(updated.body.properties['uid:major_version'], 2, 'a number in the properties object');
  const emptied = await op('Document.Update', { input: file.uid, params: { properties: 'dc:description=' } });
  t.equal(emptied.body.properties['dc:description'], null, 'empty text clears the field');
  // A value the operation cannot even parse ends in an exception nothing maps: Automation answers 500.
  const unparsable = await op('Document.Update', { input: file.uid, params: { properties: 'files:files=[not json' } });
  t.equal(unparsable.statusCode, 500, 'a list of complex values whose JSON text does not parse');
  t.same(sandbox.store.get(file.uid)?.properties['dc:subjects'], ['a', 'b'], '…changes nothing');
  const noSuchSchema = await op('Document.Create', {
    input: WS,
    params: { type: 'Note', name: 'flagged', properties: { 'erpHttpContent:docId': 'x' } },
  });
  t.equal(noSuchSchema.statusCode, 500, 'Automation create fails on a property of a schema the type lacks');
  t.notOk(sandbox.store.getByPath(`${WS}/flagged`), '…and creates nothing');
  const zero = await op('Document.Update', { input: file.uid, params: { properties: 'uid:minor_version=two' } });
  t.equal(zero.body.properties['uid:minor_version'], 0, 'a number that does not parse is 0 (LongType.decode)');
  const untitled = await op('Document.Create', { input: WS, params: { type: 'Note' } });
  t.equal(untitled.body.path, `${WS}/Untitled`, 'no name: Untitled');
  const flagged = await op('Document.AddFacet', {
    input: untitled.body.uid,
    params: { facet: 'fct_erp_http_content' },
  });
  t.equal(
    (
      await op('Document.Update', {
        input: flagged.body.uid,
        params: { properties: 'erpHttpContent:scanPerformed=maybe' },
      })
    ).body.properties['erpHttpContent:scanPerformed'],
    false,
    'a boolean is "true" in any case, false for any other text (BooleanType.decode)',
  );
  t.equal(
    (
      await op('Document.Update', {
        input: flagged.body.uid,
        params: { properties: 'erpHttpContent:scanPerformed=true' },
      })
    ).body.properties['erpHttpContent:scanPerformed'],
    true,
  );
  t.equal(
    (await op('Document.Update', { input: file.uid, params: { properties: { 'erpHttpContent:docId': 'x' } } }))
      .statusCode,
    500,
    'Automation update fails on a missing schema',
  );

  t.equal(
    (await op('Document.AddFacet', { input: `docs:${file.uid}`, params: { facet: 'fct_erp_http_content' } })).body[
      'entity-type'
    ],
    'documents',
    'list input, list output',
  );
  const removed = await op('Document.RemoveFacet', { input: file.uid, params: { facet: 'fct_erp_http_content' } });
  t.notOk(removed.body.facets.includes('fct_erp_http_content'));
  t.equal(
    (await op('Document.RemoveFacet', { input: file.uid, params: { facet: 'fct_erp_http_content' } })).body.changeToken,
    removed.body.changeToken,
    'removing an absent facet changes nothing',
  );
  t.equal((await op('Document.AddFacet', { params: { facet: 'x' } })).statusCode, 400, 'an operation that needs input');
  t.equal((await op('Document.AddFacet', { input: file.uid, params: {} })).statusCode, 400, 'a required parameter');

  t.equal((await op('Document.Fetch', { params: { value: file.uid } })).body.uid, file.uid);
  t.equal((await op('Repository.GetDocument', { params: { value: '/nope' } })).statusCode, 404);

  const moved = await op('Document.Move', {
    input: file.uid,
    params: { target: '/default-domain/workspaces', name: 'b.pdf' },
  });
  t.equal(moved.body.path, `${WS}/b.pdf`, 'Move can rename');
  t.equal(
    (await op('Document.Move', { input: file.uid, params: { target: file.uid } })).statusCode,
    400,
    'a file is not a folder',
  );
  t.equal(
    (await op('Document.Move', { input: moved.body.uid, params: { target: WS } })).body.path,
    `${WS}/b.pdf`,
    'moving into its own folder keeps the name',
  );
  const parent = (await op('Document.Create', { input: WS, params: { type: 'Folder', name: 'p' } })).body;
  const child = (await op('Document.Create', { input: parent.uid, params: { type: 'Note', name: 'child' } })).body;
  const target = (await op('Document.Create', { input: WS, params: { type: 'Folder', name: 'q' } })).body;
  await op('Document.Move', { input: parent.uid, params: { target: target.uid } });
  t.equal(((await api.get(`id/${child.uid}`)).body as Json).path, `${WS}/q/p/child`, 'children follow a moved folder');
  t.equal((await api.delete(`id/${target.uid}`)).statusCode, 204);
  t.equal((await api.get(`id/${child.uid}`)).statusCode, 404, 'removing a folder removes what it holds');
  t.equal(
    (await api.post('automation/Document.Fetch', { body: '' })).statusCode,
    400,
    'an empty body has no parameters',
  );
  t.equal(
    (await api.post('automation/Document.Fetch', { body: 'null', headers: { 'content-type': 'application/json' } }))
      .statusCode,
    400,
    'nor does a JSON null',
  );
  const ws = sandbox.store.getByPath(WS)!;
  t.equal(
    (await op('Document.Move', { input: ws.uid, params: { target: `${WS}` } })).statusCode,
    400,
    'nothing moves into itself',
  );

  const queried = await op('Repository.Query', {
    params: { query: 'SELECT * FROM File', pageSize: 1, currentPageIndex: 0, sortBy: 'dc:title', sortOrder: 'asc' },
  });
  t.equal(queried.body.resultsCount, 1);
  t.equal(queried.body.isPaginable, true);
  const unpaged = await op('Document.Query', { params: { query: 'SELECT * FROM File' } });
  t.equal(unpaged.body.pageSize, 0, 'no pageSize, no pagination');
  t.equal(
    (await op('Repository.Query', { params: { query: 'SELECT FROM' } })).statusCode,
    500,
    'a bad query is an OperationException',
  );
  t.equal(
    (
      await op(
        'Repository.Query',
        { params: { query: "SELECT * FROM File WHERE ecm:uuid = 'x'" } },
        { 'X-NXVoidOperation': 'true' },
      )
    ).statusCode,
    204,
    'void operation',
  );

  t.equal((await op('Document.Delete', { input: file.uid })).statusCode, 204);
  t.equal((await api.get(`id/${file.uid}`)).statusCode, 404, 'deleted');
  t.equal((await op('Nope.Nothing', {})).statusCode, 404, 'unknown operation');
  t.equal((await api.post('automation/login')).statusCode, 200);
});

t.test('batch upload: normal, chunked, listing and deleting', async (t) => {
  const { api, base } = await setUp(t);
  const upload = got.extend({
    prefixUrl: `${base}/api/v1/upload`,
    username: 'Administrator',
    password: 'Administrator',
    throwHttpErrors: false,
    responseType: 'json',
  });
  t.equal((await upload.get('new')).statusCode, 405, 'a batch is created with POST');
  const { batchId } = (await upload.post('new')).body as Json;
  t.equal((await upload.get(batchId)).statusCode, 204, 'an empty batch has no content');

  const chunk = (index: number, text: string) =>
    upload.post(`${batchId}/0`, {
      body: text,
      headers: {
        'X-File-Name': encodeURIComponent('scan é.pdf'),
        'X-File-Type': 'application/pdf',
        'X-Upload-Type': 'chunked',
        'X-Upload-Chunk-Count': '2',
        'X-Upload-Chunk-Index': String(index),
      },
    });
  const first = await chunk(1, 'world');
  t.equal(first.statusCode, 202, 'one chunk of two: incomplete');
  t.same((first.body as Json).uploadedChunkIds, ['1']);
  t.equal((await upload.get(`${batchId}/0`)).statusCode, 202, 'the file is still incomplete');
  const attachEarly = await api.post(`path${WS}`, {
    json: {
      'entity-type': 'document',
      type: 'File',
      name: 'early',
      properties: { 'file:content': { 'upload-batch': batchId, 'upload-fileId': '0' } },
    },
  });
  t.equal((attachEarly.body as Json).properties['file:content'], null, 'an incomplete upload attaches nothing');
  t.equal((await chunk(0, 'hello ')).statusCode, 201, 'the last chunk completes it');
  t.same((await upload.get(`${batchId}/0`)).body, { name: 'scan é.pdf', size: 11, uploadType: 'chunked' });
  t.equal(((await upload.get(`${batchId}/info`)).body as Json).fileEntries.length, 1);
  t.equal(((await upload.get(batchId)).body as Json[]).length, 1);

  await upload.post(`${batchId}/1`, { body: 'x', headers: { 'X-File-Name': 'x.txt' } });
  t.same(((await upload.get(`${batchId}/info`)).body as Json).fileEntries[1], {
    name: 'x.txt',
    size: 1,
    uploadType: 'normal',
  });
  const numeric = await api.post(`path${WS}`, {
    json: {
      'entity-type': 'document',
      type: 'File',
      name: 'numeric',
      properties: { 'file:content': { 'upload-batch': batchId, 'upload-fileId': 1 } },
    },
  });
  t.equal(
    (numeric.body as Json).properties['file:content'],
    null,
    'upload-fileId as a number attaches nothing (the real server reads a string)',
  );
  t.equal((await upload.delete(`${batchId}/1`)).statusCode, 204, 'one file removed');
  t.equal((await upload.get(`${batchId}/1`)).statusCode, 404);
  t.equal((await upload.get(`${batchId}/abc`)).statusCode, 400, 'a file index is a number');
  await upload.post(`${batchId}/5`, { body: 'y' });
  t.equal(((await upload.get(`${batchId}/5`)).body as Json).name, 'file', 'no X-File-Name: a default name');
  t.equal(
    (
      await upload.post(`${batchId}/2`, {
        form: { a: 'b' },
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
      })
    ).statusCode,
    400,
    'multipart is refused',
  );
  t.equal(
    (await upload.post(`${batchId}/0/execute/Blob.Attach`)).statusCode,
    404,
    'batch operations are not part of the sandbox',
  );

  const doc = await api.post(`path${WS}`, {
    json: {
      'entity-type': 'document',
      type: 'File',
      name: 'joined',
      properties: { 'file:content': { 'upload-batch': batchId, 'upload-fileId': '0' } },
    },
    headers: { 'X-Batch-No-Drop': 'true' },
  });
  t.equal((doc.body as Json).properties['file:content'].length, '11', 'chunks are joined in order');
  t.equal((await upload.get(`${batchId}/0`)).statusCode, 200, 'X-Batch-No-Drop keeps the batch');
  const download = await got(`${base}/api/v1/id/${(doc.body as Json).uid}/@blob/file:content`, {
    username: 'Administrator',
    password: 'Administrator',
  });
  t.equal(download.body, 'hello world');
  t.match(download.headers['content-disposition'], /scan%20%C3%A9\.pdf/);

  t.equal((await upload.delete(batchId)).statusCode, 204, 'the batch is removed');
  t.equal((await upload.get(batchId)).statusCode, 404);
});

t.test('tokens, users, schema listings and error answers', async (t) => {
  const { api, base, sandbox } = await setUp(t);
  const admin = { username: 'Administrator', password: 'Administrator', throwHttpErrors: false } as const;
  const tokenUrl = `${base}/authentication/token?applicationName=app&deviceId=d1&permission=rw`;
  const token = (await got(tokenUrl, admin)).body;
  t.equal((await got(tokenUrl, admin)).body, token, 'the same device gets the same token');
  t.equal(
    (await got(`${base}/authentication/token?applicationName=app`, admin)).statusCode,
    400,
    'parameters are required',
  );
  t.equal(
    (
      (await got(`${base}/api/v1/me`, { headers: { 'X-Authentication-Token': token }, responseType: 'json' }))
        .body as Json
    ).id,
    'Administrator',
  );
  t.equal(
    (await got(`${base}/api/v1/me?token=${token}`, { responseType: 'json' })).statusCode,
    200,
    'the token also works as a query parameter',
  );
  await got(`${tokenUrl}&revoke=true`, admin);
  const revoked = await got(`${base}/api/v1/me`, {
    headers: { 'X-Authentication-Token': token },
    throwHttpErrors: false,
  });
  t.equal(revoked.statusCode, 401, 'a revoked token is refused');
  t.equal(revoked.headers['www-authenticate'], undefined, 'without a Basic challenge');
  const malformed = await got(`${base}/api/v1/me`, {
    headers: { Authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` },
    throwHttpErrors: false,
  });
  t.equal(malformed.statusCode, 401, 'Basic credentials without a colon are refused');

  t.same((await api.get('user/jdoe')).body, {
    'entity-type': 'user',
    id: 'jdoe',
    properties: { username: 'jdoe', firstName: '', lastName: '', email: '', company: '', groups: ['members'] },
    extendedGroups: [{ name: 'members', label: 'members', url: 'group/members' }],
    isAdministrator: false,
    isAnonymous: false,
  });
  t.equal((await api.get('user/ghost')).statusCode, 404);

  t.equal((await api.get('nothing/here')).statusCode, 404);
  t.equal((await got(`${new URL(base).origin}/elsewhere`, admin)).statusCode, 404, 'outside /nuxeo');
  t.equal(((await api.get('path/')).body as Json).type, 'Root', 'the root by path');
  const icon = (await api.put('path/', { json: { properties: { 'common:icon': '/icons/root.png' } } })).body as Json;
  t.equal(
    icon.properties['common:icon'],
    '/icons/root.png',
    'the root has no dublincore, so nothing stamps dc:modified',
  );
  t.notOk('dc:modified' in icon.properties);
  t.equal((await got(`${base}/other/thing`, admin)).statusCode, 404, 'outside the REST API');
  t.equal((await api.delete('path/')).statusCode, 400, 'the root cannot be removed');
  const all = (await api.get('search/execute', { searchParams: { pageSize: 1 } })).body as Json;
  t.ok(all.resultsCount > 3, 'no query means every document');
  t.equal((await api.get('search/lang/SQL/execute')).statusCode, 400, 'only NXQL');
  t.equal((await api.get('search/other')).statusCode, 404);
  t.equal((await api.patch(`path${WS}`)).statusCode, 405);
  t.equal(
    (await api.post(`path${WS}`, { body: '{', headers: { 'content-type': 'application/json' } })).statusCode,
    400,
    'broken JSON',
  );
  t.equal((await api.post(`path${WS}`, { json: { name: 'x' } })).statusCode, 400, 'type is required');
  t.equal((await api.post(`path${WS}`, { json: { type: 'Nope', name: 'x' } })).statusCode, 400, 'unknown type');
  t.equal((await api.get(`path${WS}/@nope`)).statusCode, 404, 'unknown adapter');
  t.equal(((await api.get(`path${WS}/@children`)).body as Json).resultsCount, 0);
  t.equal(
    (await api.post(`path${WS}`, { json: { type: 'Note', name: 'n', properties: { 'dc:subjects': 'x' } } })).statusCode,
    400,
    'a string where a list belongs',
  );
  const file = sandbox.store.create(
    sandbox.actor(),
    sandbox.store.getByPath(WS)!,
    { type: 'File', name: 'f', properties: {} },
    NO_BLOBS,
  );
  t.equal(
    (await api.post(`id/${file.uid}`, { json: { type: 'Note', name: 'n' } })).statusCode,
    400,
    'a file holds no children',
  );
  const unresolved = sandbox.store.update(
    sandbox.actor(),
    sandbox.store.get(file.uid)!,
    { 'file:content': { 'upload-batch': 'none', 'upload-fileId': '0' } },
    NO_BLOBS,
    {},
  );
  t.notOk('file:content' in unresolved.properties, 'a reference to no upload attaches nothing');
  const wrongTypes = {
    'dc:expired': 'soon',
    'dc:valid': 5,
    'common:size': 'big',
    'file:content': 'x',
    'dc:title': { a: 1 },
    'files:files': [5],
    'uid:major_version': 1.5,
  };
  // DocumentPropertiesJsonReader: an object for a scalar cannot be deserialized (a boolean from text never fails: parseBoolean).
  sandbox.store.addFacet(sandbox.actor(), sandbox.store.get(file.uid)!, 'fct_erp_http_content');
  for (const [key, value] of Object.entries({ ...wrongTypes, 'erpHttpContent:scanPerformed': { a: 1 } })) {
    t.equal(
      (await api.put(`id/${file.uid}`, { json: { properties: { [key]: value } } })).statusCode,
      400,
      `wrong type for ${key}`,
    );
  }
  t.equal((await got(`${base}/nxfile/default/${file.uid}/blobholder:0/x.pdf`, admin)).statusCode, 404, 'no blob');
  t.equal(
    (
      await api.put(`id/${file.uid}`, {
        json: { changeToken: sandbox.store.changeToken(sandbox.store.get(file.uid)!) },
      })
    ).statusCode,
    200,
    'a PUT without properties only checks the token',
  );
  const blob = sandbox.store.storeBlob(Buffer.from('attached'), 'a.txt', 'text/plain');
  const withFiles = sandbox.store.update(
    sandbox.actor(),
    sandbox.store.get(file.uid)!,
    { 'files:files': [{ file: { 'upload-batch': 'b', 'upload-fileId': '0' } }] },
    () => blob,
    {},
  );
  const rendered = (await api.get(`id/${file.uid}`)).body as Json;
  t.equal(rendered.properties['files:files'][0].file.name, 'a.txt', 'complex list items are rendered');
  t.match(
    rendered.properties['files:files'][0].file.data,
    /\/nxfile\/default\/.*\/files:files\/0\/file\/a\.txt/,
    'with a download URL per item',
  );
  t.equal(
    (await got(`${base}/api/v1/id/${withFiles.uid}/@blob/files:files/0/file`, admin)).body,
    'attached',
    'a blob inside a complex list downloads',
  );
  t.equal(
    (await got(`${base}/api/v1/id/${withFiles.uid}/@blob/files:files/3/file`, admin)).statusCode,
    404,
    'past the end of the list',
  );
  t.equal((await api.get('user/')).statusCode, 404, 'no user name');
  t.equal((await api.delete(`id/${file.uid}`)).statusCode, 204);
});

t.test('an administrator creates a user; anyone else, a user without a name or a second one is refused', async (t) => {
  const { base, api } = await setUp(t);
  const create = (entity: Json, as = api) => as.post('user', { json: entity });
  const made = await create({
    'entity-type': 'user',
    id: 'svc',
    properties: { username: 'svc', password: 'pw', groups: ['members'] },
  });
  t.equal(made.statusCode, 201);
  t.match(made.body, { 'entity-type': 'user', id: 'svc', properties: { groups: ['members'] } });
  const asSvc = await got(`${base}/api/v1/me`, { username: 'svc', password: 'pw', responseType: 'json' });
  t.match(asSvc.body, { id: 'svc' }, 'it signs in with its password');
  t.equal((await create({ 'entity-type': 'user', id: 'svc' })).statusCode, 409);
  t.equal((await create({ 'entity-type': 'user', properties: {} })).statusCode, 400);
  t.equal(
    (await create({ 'entity-type': 'user', properties: { username: 'bare' } })).statusCode,
    201,
    'name from properties',
  );
  const jdoe = api.extend({ username: 'jdoe', password: 'jdoe' });
  t.equal((await create({ 'entity-type': 'user', id: 'other' }, jdoe)).statusCode, 403);
});

t.test(
  'config/schemas and config/facets declare what is deployed, as Nuxeo writes them; an unknown name is 204',
  async (t) => {
    const sandbox = new RepositorySandbox({ undeployedFacets: ['fct_erp_barcode'] });
    const base = await sandbox.start();
    t.teardown(() => sandbox.stop());
    const get = (path: string) =>
      got(`${base}/api/v1/config/${path}`, {
        username: 'Administrator',
        password: 'Administrator',
        throwHttpErrors: false,
      });
    const list = JSON.parse((await get('schemas')).body) as Json[];
    t.match(
      list.find((s) => s.name === 'files'),
      { '@prefix': 'files', fields: { files: { type: 'complex[]', fields: { file: 'blob' } } } },
    );
    t.match(
      list.find((s) => s.name === 'dublincore'),
      { fields: { subjects: 'string[]', created: 'date' } },
    );
    t.notOk(
      list.some((s) => s.name === 'erp_barcode'),
      'the undeployed facet takes its schema with it',
    );
    t.same(JSON.parse((await get('schemas/file')).body), {
      'entity-type': 'schema',
      name: 'file',
      prefix: 'file',
      '@prefix': 'file',
      fields: { content: 'blob' },
    });
    const facets = JSON.parse((await get('facets')).body) as Json[];
    t.match(
      facets.find((f) => f.name === 'Folderish'),
      { 'entity-type': 'facet' },
    );
    t.notOk('schemas' in facets.find((f) => f.name === 'Folderish'), 'a facet without schemas has no schemas field');
    t.match(JSON.parse((await get('facets/fct_erp_http_content')).body), {
      name: 'fct_erp_http_content',
      schemas: [{ name: 'erp_http_content', prefix: 'erpHttpContent', fields: { docId: 'string' } }],
    });
    for (const unknown of ['facets/fct_erp_barcode', 'schemas/erp_barcode', 'schemas/nope']) {
      const answer = await get(unknown);
      t.same([answer.statusCode, answer.body], [204, ''], unknown);
    }
    t.equal((await get('types')).statusCode, 404, 'what the sandbox does not model is not found');
  },
);
