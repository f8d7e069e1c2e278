import t from 'tap';
import { InHand } from '../src/job/lanes/in-hand.js';
import { rfcCall } from '../src/job/calls/rfc-call.js';
import { rfcCallSchema } from '../src/config/call-schema.js';
import { DocumentError } from '../common/errors.js';
import type { ErpPort } from '../src/ports/erp-port.js';
import type { RfcRequest } from '../src/erp/rfc-client.js';

/** The run's hand-over: a document in one lane at a time, and the intake held to what is settled. */

t.test('a document is taken once while held, not again once let go, until it is long forgotten', async (t) => {
  const inHand = new InHand(10, 2);
  t.ok(inHand.take('a', 'search'));
  t.notOk(inHand.take('a', 'intake'), 'held by another source');
  inHand.done('a');
  inHand.done('a');
  t.notOk(inHand.take('a', 'search'), 'settled in this run: a lagging search shows it again, it is not taken');
  for (const uid of ['b', 'c']) {
    inHand.take(uid, 'search');
    inHand.done(uid);
  }
  t.ok(inHand.take('a', 'search'), 'the run remembers the last 2 only');
});

t.test('the intake waits while its documents held reach intakeRoundSize, and not once the run stops', async (t) => {
  const inHand = new InHand(2);
  inHand.take('x', 'intake');
  inHand.take('y', 'intake');
  inHand.take('z', 'search');
  let waited = false;
  const room = inHand.intakeRoom(new AbortController().signal).then(() => (waited = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(waited, 'two of the intake held: it waits');
  inHand.done('z');
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(waited, "a search's document does not count");
  inHand.done('x');
  await room;
  t.ok(waited, 'one settled: it labels on');
  inHand.take('w', 'intake');
  const stop = new AbortController();
  const stopped = inHand.intakeRoom(stop.signal);
  stop.abort('SIGTERM');
  await stopped;
  t.pass('a stop ends the wait');
});

t.test(
  "a table lookup's condition that does not fit a WHERE row of RFC_READ_TABLE is refused, naming it",
  async (t) => {
    const call = rfcCallSchema.parse({
      function: 'Z_SEND',
      parameters: { KEY: { property: 'z:key' } },
      result: { erpReference: '{KEY}' },
      lookup: { table: 'ZTABLE', where: { KEY: '{KEY}' } },
    });
    const reads: RfcRequest[] = [];
    const port: ErpPort<RfcRequest> = {
      read: async (request) => {
        reads.push(request);
        return { FIELDS: [], DATA: [] };
      },
      write: async () => ({}),
    };
    const adapter = rfcCall(call, port, 'YYYY-MM-DD');
    const value = (text: string) => [{ target: 'KEY', value: text, fromDocument: true }];
    t.equal(await adapter.lookup?.(value('short')), undefined, 'a row that fits is asked: none found');
    t.match(reads[0].params.OPTIONS, [{ TEXT: "KEY = 'short'" }]);
    const error = await adapter.lookup?.(value("O'".repeat(40))).catch((e: unknown) => e);
    t.type(error, DocumentError);
    t.match(
      (error as Error).message,
      /^ZTABLE-KEY = 'O''O''.*' does not fit a WHERE row of RFC_READ_TABLE \(72 characters\)$/,
    );
    t.equal(reads.length, 1, 'not asked');
  },
);
