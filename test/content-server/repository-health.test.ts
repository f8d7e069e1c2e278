import t from 'tap';
import { FRESH_MS, RepositoryHealth } from '../../src/content-server/repository-health.js';
import { servedEnv } from '../helpers/content-server.js';

/** serverInfo's status: the repository as the server's own account reaches it. */

t.test('checked at first, then answered from the last check while the next one runs, at most every 5 s', async (t) => {
  let clock = 0;
  let up = false;
  let asked = 0;
  const client = {
    me: async () => {
      asked++;
      if (!up) throw new Error('read the signed-in user failed with HTTP 401');
      return { id: 'archivelink' };
    },
  };
  const health = new RepositoryHealth(client, () => clock);
  t.same(await health.state(), {
    running: false,
    reason: 'the repository: read the signed-in user failed with HTTP 401',
  });
  up = true;
  clock = FRESH_MS - 1;
  t.match(await health.state(), { running: false, reason: /401/ }, 'fresh: not asked again');
  t.equal(asked, 1);
  clock = FRESH_MS;
  t.match(await health.state(), { running: false }, 'stale: the last state, while the next check runs');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(asked, 2);
  t.same(await health.state(), { running: true }, 'and then what it found');
});

t.test("serverInfo says error, and why, when the repository refuses the server's credentials", async (t) => {
  const env = await servedEnv(t, {
    connection: { repositoryAuth: { type: 'basic', username: 'Administrator', password: 'Wrong-Secret-42' } },
  });
  const answer = await env.call('GET', 'serverInfo&pVersion=0047');
  t.equal(answer.status, 200, 'serverInfo itself answers');
  const text = answer.body.toString();
  t.match(
    text,
    /^serverStatus="error";.*serverStatusDescription="the repository: read the signed-in user failed with HTTP 401/,
  );
  t.match(text, /contRep="Z1";contRepDescription="[^"]*";contRepStatus="error";/);
  t.notMatch(text, 'Wrong-Secret-42', 'no secret in it');
});
