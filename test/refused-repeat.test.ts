import t from 'tap';
import { rfcCallSchema } from '../src/config/call-schema.js';
import { ErpRefusal, execute, type CallAdapter } from '../src/job/calls/execute.js';
import type { RepositoryDocument } from '../src/repository/document.js';

/**
 * A repeat SAP refuses is looked up once more before the refusal is the document's (an earlier
 * attempt's work may have arrived after the first lookup read): each way that look can go. Over
 * real HTTP the case is in exactly-once.test.ts; here the adapter is one the test scripts.
 */

const call = rfcCallSchema.parse({
  function: 'Z_SEND',
  parameters: { ID: { property: 'erpBarcode:barcode' } },
  result: { erpReference: '{ID}' },
});

const doc = {
  uid: 'u1',
  path: '/x/scan.pdf',
  properties: { 'erpBarcode:barcode': 'BC-1' },
} as unknown as RepositoryDocument;

/** An adapter whose send SAP refuses, and whose lookups answer in turn from `looks` (an Error is thrown). */
function refusing(looks: unknown[] | undefined): CallAdapter & { lookups: number } {
  const adapter = {
    config: call,
    dateFormat: 'YYYY-MM-DD' as const,
    name: 'Z_SEND',
    lookups: 0,
    send: async () => {
      throw new ErpRefusal('Z_SEND: already stored for this document', { target: 'Z_SEND' });
    },
    alreadyDone: () => false,
    probe: async () => ({}),
  };
  if (looks === undefined) return adapter;
  return Object.assign(adapter, {
    lookup: async () => {
      const answer = looks[adapter.lookups++];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
}

t.test(
  'found on the second look: done; not found, a lookup that fails, no lookup, a first attempt: refused',
  async (t) => {
    const found = refusing([undefined, { ROW: 1 }]);
    t.same(await execute(found, [{ doc, repeat: true, lastLook: false }]), [{ reference: 'BC-1' }]);
    t.equal(found.lookups, 2, 'looked up before the send and after the refusal');

    const absent = refusing([undefined, undefined]);
    t.match(await execute(absent, [{ doc, repeat: true, lastLook: false }]), [{ error: { name: 'ErpRefusal' } }]);
    const failing = refusing([undefined, new Error('RFC_READ_TABLE refused')]);
    t.match(await execute(failing, [{ doc, repeat: true, lastLook: false }]), [{ error: { name: 'ErpRefusal' } }]);
    t.match(await execute(refusing(undefined), [{ doc, repeat: true, lastLook: false }]), [
      { error: { name: 'ErpRefusal' } },
    ]);
    const first = refusing([{ ROW: 1 }]);
    t.match(await execute(first, [{ doc, repeat: false, lastLook: false }]), [{ error: { name: 'ErpRefusal' } }]);
    t.equal(first.lookups, 0, 'a first attempt is not looked up: nothing of it can be in SAP');
  },
);
