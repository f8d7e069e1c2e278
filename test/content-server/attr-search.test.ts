import t from 'tap';
import { SIGNED, servedEnv } from '../helpers/content-server.js';

const { urls } = SIGNED;

/** A print list's description (compId descr), as SAP's attrSearch page lays it out: DKEY attributes, DAIN values. */
const key = (name: string, offset: number, length: number): string =>
  `0 0 DKEY${name.padEnd(40)}${String(offset).padStart(3, '0')}${String(length).padStart(3, '0')}`;
const DESCR = [
  '0 0 DPRL',
  key('Company code', 0, 5),
  key('Customer', 5, 20),
  `73 138 DAIN${'12345'}${'Obelix plc'.padEnd(20)}`,
  `211 120 DAIN${'12345'}${'Br\xf6selplc'.padEnd(20)}`,
  `331 99 DAIN${'67890'}${'Obelix plc'.padEnd(20)}`,
  '0 0 DEPL',
].join('\n');

t.test('attrSearch finds the DAIN lines whose attributes all match, and says which patterns fit no DKEY', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  t.equal((await env.call('PUT', urls.createPutA, 'the print list itself')).status, 201);
  t.equal((await env.call('PUT', urls.updatePutADescr, Buffer.from(DESCR, 'latin1'))).status, 200);
  const search = (pattern: string, extra = ''): Promise<string> =>
    env.call('GET', `${urls.attrSearchA}&pattern=${pattern}${extra}`).then((a) => a.error ?? a.body.toString());
  t.equal(await search('0+5+12345', '&numResults=10'), '2;73;138;211;120;', 'one attribute');
  t.equal(await search('0+5+12345#5+20+OBELIX%20PLC', '&numResults=10'), '1;73;138;', 'all conditions, case ignored');
  t.equal(await search('0+5+12345#5+20+OBELIX%20PLC', '&numResults=10&caseSensitive=y'), '0;', 'case kept');
  t.equal(await search('5+20+Br%F6selplc'), '1;211;120;', 'a Latin-1 value, as SAP encodes it');
  t.equal(await search('0+5+12345', '&numResults=10&fromOffset=100'), '1;211;120;', 'from a data offset on');
  t.equal(await search('0+5+12345'), '1;73;138;', 'numResults defaults to 1');
  t.equal(await search('0+5+12345', '&numResults=10&toOffset=100'), '1;73;138;', 'up to a data offset');
  t.match(await search('3+5+12345'), /fits no DKEY/);
  t.match(await search('garbage'), /is not offset\+length\+value/);
  t.match(await search(''), /pattern is missing/);
  t.match(await search('0+5+12345', '&numResults=0'), /numResults must be at least 1/);
  const keysOnly = Buffer.from([key('Company code', 0, 5), '0 0 DEPL'].join('\n'), 'latin1');
  t.equal((await env.call('PUT', urls.updatePutADescr, keysOnly)).status, 200);
  t.equal(await search('0+5+12345'), '0;', 'a description without values');
  t.match(await search('1+5+12345'), /fits no DKEY/, 'its pattern is checked all the same');
});
