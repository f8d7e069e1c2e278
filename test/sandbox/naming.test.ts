import t from 'tap';
import { pathSegment, uniqueName } from '../../sandbox/repository/naming.js';

/** Path segments as the repository sandbox makes them, after the real server. */

t.test('path segments as the real server makes them', async (t) => {
  t.match(pathSegment(' ... '), /^[0-9a-f]{24}$/, 'only punctuation: a random id');
  t.equal(pathSegment('a/b\\c'), 'a-b-c');
  const now = Date.now();
  // 'x' and every 'x.<millis>' up to 3 ms ahead are taken, as after many clashes in a row.
  const name = uniqueName('x', (n) => n === 'x' || Number(n.slice(2)) < now + 3);
  t.ok(Number(name.slice(2)) >= now + 3, 'clashes in the same millisecond still get different names');
});
