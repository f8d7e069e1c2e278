import t from 'tap';
import { contentServerSchema } from '../../src/config/content-server-schema.js';
import { PutCertSources } from '../../src/content-server/signatures/put-cert-sources.js';
import { FIXTURE_AUTH_ID, fixture, servedEnv } from '../helpers/content-server.js';

/** putCertFrom: the addresses SAP's putCert may come from, when an administrator names them. */

t.test('addresses and subnets, IPv4 and IPv6, an IPv4 client on a dual-stack socket among them', async (t) => {
  const sources = new PutCertSources(['10.20.0.0/16', '192.168.1.5', 'fd00::5', '2001:db8::/32']);
  t.ok(sources.allows('10.20.3.4'));
  t.ok(sources.allows('::ffff:10.20.3.4'), 'IPv4-mapped');
  t.ok(sources.allows('192.168.1.5'));
  t.ok(sources.allows('fd00::5'));
  t.ok(sources.allows('2001:db8:1::7'));
  t.notOk(sources.allows('10.21.0.1'));
  t.notOk(sources.allows('::ffff:192.168.1.6'));
  t.notOk(sources.allows('fd00::6'));
  t.notOk(sources.allows(undefined), 'a connection already closed has no address');
});

t.test('validate refuses what is not an address or a subnet', async (t) => {
  const connection = (putCertFrom: unknown) => ({
    connections: [
      {
        name: 'S4H',
        repositoryAuth: { type: 'basic', username: 'u', password: 'p' },
        contentRepositories: [{ contRep: 'Z1', storagePath: '/default-domain/workspaces/sap-archive/Z1' }],
        putCertFrom,
      },
    ],
  });
  t.ok(contentServerSchema.safeParse(connection(['10.0.0.0/8', 'fd00::/64', '127.0.0.1'])).success);
  for (const bad of ['10.0.0.0/33', 'sap.example.com', '10.0.0.0/8/1', 'fd00::/129', '10.0.0.0/x']) {
    const parsed = contentServerSchema.safeParse(connection([bad]));
    t.match(parsed.error?.issues, [{ message: 'an IP address or subnet, e.g. 10.20.0.0/16 or fd00::5' }], bad);
  }
  t.notOk(contentServerSchema.safeParse(connection([])).success, 'an empty list is a mistake, not "nowhere"');
});

t.test(
  'a putCert from an address the connection does not list is refused, nothing filed; from one it lists, filed',
  async (t) => {
    const put = (env: Awaited<ReturnType<typeof servedEnv>>) =>
      env.call('PUT', `putCert&pVersion=0047&contRep=Z1&authId=${FIXTURE_AUTH_ID}`, fixture('dsa.der'));
    const elsewhere = await servedEnv(t, { connection: { putCertFrom: ['10.0.0.0/8'] } });
    const refused = await put(elsewhere);
    t.equal(refused.status, 401);
    t.match(
      refused.error,
      /^putCert from (::ffff:)?127\.0\.0\.1 refused: not an address of putCertFrom of connection S4H$/,
    );
    t.same(await elsewhere.certificates.list(), [], 'nothing filed');
    const here = await servedEnv(t, { connection: { putCertFrom: ['127.0.0.1', '::1'] } });
    t.equal((await put(here)).status, 200);
    t.equal((await here.certificates.list()).length, 1);
  },
);
