import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadChains, runChain, type Chain } from '../../sandbox/repository/chains.js';
import { RepositorySandbox } from '../../sandbox/repository/server.js';
import { NO_BLOBS, RepositoryError, type StoredDoc } from '../../sandbox/repository/store.js';

/**
 * The sandbox's Automation chains beyond the package's own (test/intake.test.ts runs that one over
 * HTTP): how values reach operations, and what it refuses rather than guess.
 */

const WS = '/default-domain/workspaces';

function chainsOf(xml: string): Map<string, Chain> {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-chains-'));
  writeFileSync(join(dir, 'chains-contrib.xml'), xml);
  // Not a component (a deployment fragment is skipped by name, anything else without extensions adds nothing).
  writeFileSync(join(dir, 'other.xml'), '<fragment version="1"/>');
  writeFileSync(join(dir, 'deployment-fragment.xml'), '<fragment version="1"/>');
  return loadChains(dir);
}

const CHAINS = chainsOf(`<?xml version="1.0"?>
<component name="test">
  <extension target="org.nuxeo.ecm.core.schema.TypeService" point="doctype"/>
  <extension target="org.nuxeo.ecm.core.operation.OperationServiceComponent" point="chains">
    <chain id="notes">
      <operation id="Document.Create">
        <param type="string" name="type">Note</param>
        <param name="name">expr:ChainParameters['name']</param>
        <param type="properties" name="properties">dc:title=From text
dc:description=</param>
      </operation>
      <operation id="Context.SetInputAsVar"><param name="name">first</param></operation>
      <operation id="Repository.GetDocument"><param type="document" name="value">${WS}</param></operation>
      <operation id="Document.Create">
        <param type="string" name="type">Note</param>
        <param type="properties" name="properties">expr:ChainParameters['values']</param>
      </operation>
      <operation id="Repository.GetDocument"><param type="document" name="value">expr:Context['first']</param></operation>
      <operation id="Document.AddFacet"><param type="string" name="facet">fct_erp_http_content</param></operation>
      <operation id="Document.SetACE">
        <param name="user">Administrator</param>
        <param name="permission">Read</param>
        <param type="boolean" name="grant">FALSE</param>
      </operation>
    </chain>
    <chain id="delete">
      <operation id="Document.Delete"/>
      <operation id="Repository.GetDocument"><param type="document" name="value">${WS}</param></operation>
    </chain>
    <chain id="a-query"><operation id="Repository.Query"><param name="query">SELECT * FROM Note</param></operation></chain>
    <chain id="a-list">
      <operation id="Context.SetInputAsVar"><param name="name">both</param></operation>
      <operation id="Document.AddFacet"><param name="facet">fct_erp_http_content</param><param type="boolean" name="save"/></operation>
    </chain>
    <chain id="create-then-fail">
      <operation id="Document.Create"><param name="type">Note</param><param name="name">doomed</param></operation>
      <operation id="Document.AddFacet"><param name="facet">no_such_facet</param></operation>
    </chain>
    <chain id="unknown-operation"><operation id="Context.RestoreDocumentInput"><param name="name">x</param></operation></chain>
    <chain id="an-expression"><operation id="Document.Create"><param name="type">expr:'Note'</param></operation></chain>
    <chain id="a-number"><operation id="Document.Create"><param name="type">expr:ChainParameters['type']</param></operation></chain>
    <chain id="no-properties">
      <operation id="Document.Update"><param type="properties" name="properties">expr:ChainParameters['values']</param></operation>
    </chain>
  </extension>
</component>`);

function setUp() {
  const sandbox = new RepositorySandbox();
  const store = sandbox.store;
  const actor = sandbox.actor();
  const workspaces = store.getByPath(WS) as StoredDoc;
  const note = (name: string): StoredDoc =>
    store.create(actor, workspaces, { type: 'Note', name, properties: {} }, NO_BLOBS);
  const run = (id: string, chainParameters: Record<string, unknown> = {}, input: StoredDoc[] = [workspaces]) =>
    store.transaction(() =>
      runChain(CHAINS.get(id) as Chain, {
        store,
        actor,
        users: new Set(['Administrator']),
        resolveBlob: NO_BLOBS,
        input,
        inputIsList: input.length > 1,
        chainParameters,
      }),
    );
  const failure = (id: string, chainParameters: Record<string, unknown> = {}): number | undefined => {
    try {
      run(id, chainParameters);
      return undefined;
    } catch (error) {
      return (error as RepositoryError).status;
    }
  };
  return { store, note, run, failure };
}

const notes = (store: RepositorySandbox['store']): StoredDoc[] => [...store.all()].filter((d) => d.type === 'Note');

t.test('values reach operations as Nuxeo gives them', async (t) => {
  const { store, run } = setUp();
  const first = run('notes', {
    name: 'first',
    values: { 'dc:title': null, 'dc:subjects': ['x', 7], 'dc:description': [] },
  }) as StoredDoc;
  t.equal(first.path, `${WS}/first`, 'the answer is the last output: the note a variable kept');
  t.equal(first.properties['dc:title'], 'From text', 'properties as key=value text');
  t.notOk('dc:description' in first.properties, 'empty text clears');
  t.ok(first.facets.includes('fct_erp_http_content'));
  t.same(
    first.acls.flatMap((acl) => acl.aces.map((ace) => [ace.username, ace.permission, ace.granted])),
    [['Administrator', 'Read', false]],
    'a boolean from any case of its text',
  );
  const second = notes(store).find((d) => d.uid !== first.uid) as StoredDoc;
  t.equal(second.properties['dc:title'], 'null', 'a JSON null is the text "null" (JsonNodeToProperties)');
  t.same(second.properties['dc:subjects'], ['x', '7'], "a list's items joined with commas, then split again");
  t.notOk('dc:description' in second.properties, 'an empty list is no value');
  t.match(second.name, /^first\./, "a parameter the chain leaves unset takes a chain parameter's of its name");
});

t.test("what an operation answers is the next one's input: documents, a list, or nothing", async (t) => {
  const { store, note, run } = setUp();
  const [a, b] = [note('a'), note('b')];
  const both = run('a-list', {}, [a, b]) as StoredDoc[];
  t.same(
    both.map((d) => d.facets.includes('fct_erp_http_content')),
    [true, true],
    'a list in, a list out',
  );
  const page = run('a-query') as { page: { entries: StoredDoc[] } };
  t.equal(page.page.entries.length, 2, 'a page of results');
  t.equal((run('delete', {}, [a]) as StoredDoc).path, WS, 'after a void operation, one that takes no input');
  t.same(
    notes(store).map((d) => d.name),
    ['b'],
  );
});

t.test('what the sandbox cannot check, it refuses; a failure leaves nothing', async (t) => {
  const { store, failure } = setUp();
  t.equal(failure('create-then-fail'), 500, 'an unknown facet');
  t.notOk(store.getByPath(`${WS}/doomed`), 'the note created before it is undone');
  t.equal(failure('unknown-operation'), 404, 'an operation it does not have');
  t.equal(failure('an-expression'), 500, 'an expression other than a parameter or a variable');
  t.equal(failure('a-number', { type: 12 }), 500, 'a number for a text parameter');
  t.equal(failure('no-properties', { values: 5 }), 500, 'a number for a properties parameter');
  t.equal(failure('no-properties', { values: ['dc:title'] }), 500, 'a list for a properties parameter');
});
