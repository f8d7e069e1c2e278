import t from 'tap';
import { resolveValue } from '../src/job/intake/substitute.js';
import type { RepositoryDocument } from '../src/repository/document.js';

/** `$` references in the mapping file's values (src/job/intake/substitute.ts). */

t.test('$ references', async (t) => {
  const doc = {
    uid: 'u1',
    path: '/p',
    properties: { 'dc:title': 'T', 'file:content': { name: 'a.pdf' }, 'dc:description': '' },
  } as unknown as RepositoryDocument;
  t.same(resolveValue('$id', doc), { ok: true, value: 'u1' });
  t.same(resolveValue('$file:content.name', doc), { ok: true, value: 'a.pdf' });
  t.same(resolveValue('$file:content/name', doc), { ok: true, value: 'a.pdf' });
  t.same(
    resolveValue('$dc:title.name', doc),
    { ok: false, reference: '$dc:title.name' },
    'into a plain value: missing',
  );
  t.same(resolveValue('$dc:description', doc), { ok: false, reference: '$dc:description' }, 'empty counts as missing');
  t.same(resolveValue('$$5', doc), { ok: true, value: '$5' });
  t.same(resolveValue(false, doc), { ok: true, value: false });
});
