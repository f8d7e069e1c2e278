import t from 'tap';
import { convert, readBack } from '../src/job/calls/read-back.js';
import { readSchema } from '../src/config/call-schema.js';
import { afterLink } from '../src/job/calls/after-link.js';
import { openUrl, openUrlReads } from '../src/job/calls/open-url.js';
import type { ErpSystemConfig } from '../src/config/erp-schema.js';
import type { TaskConfig } from '../src/config/task-schema.js';
import type { RepositoryDocument } from '../src/repository/document.js';

/** SAP's values as the repository's property types take them, and "Open in SAP" without a read. */

t.test('values of SAP answers converted to the property type, or refused saying why', async (t) => {
  t.same(convert('1190.00', 'double'), { ok: true, value: 1190 });
  t.same(convert('5.00-', 'double'), { ok: true, value: -5 }, "ABAP's trailing minus");
  t.same(convert('12', 'long'), { ok: true, value: 12 });
  t.same(convert('1.5', 'long'), { ok: false, problem: '= "1.5" is not a whole number' });
  t.same(convert('12,50', 'double'), { ok: false, problem: '= "12,50" is not a number' });
  t.same(convert('2026-11-20', 'date'), { ok: true, value: '2026-11-20' });
  t.same(convert('20261120', 'date'), { ok: true, value: '2026-11-20' });
  t.same(convert('/Date(1795132800000)/', 'date'), { ok: true, value: '2026-11-20' });
  t.same(convert('0000-00-00', 'date'), { ok: true, value: null }, "SAP's empty date");
  t.same(convert('2026-19-40', 'date'), { ok: false, problem: '= "2026-19-40" is not a date' });
  t.same(convert('X', 'boolean'), { ok: true, value: true });
  t.same(convert('', 'boolean'), { ok: true, value: false });
  t.same(convert('Y', 'boolean'), { ok: false, problem: '= "Y" is not a flag (X or blank)' });
  t.same(convert(' 100001 ', 'string'), { ok: true, value: '100001' });
  t.same(convert(42, undefined), { ok: true, value: '42' }, "an administrator's own schema takes text");
  t.match(convert('x'.repeat(1001), 'string'), { ok: false, problem: /longer than the 1000 characters/ });
  t.same(convert(undefined, 'string'), { ok: false, problem: 'is not in the answer' });
  t.same(convert({ A: '1' }, 'string'), { ok: false, problem: 'is a structure or a table, not a value' });
});

const doc = (properties: Record<string, unknown>): RepositoryDocument =>
  ({ uid: 'u1', path: '/default-domain/workspaces/ERP/Invoices/a.pdf', properties }) as RepositoryDocument;

const SYSTEM = {
  name: 'S4H',
  openInSap: {
    BUS2081: {
      url: 'https://sap.example.com/ui#SupplierInvoice-displayAdvanced?SupplierInvoice={u:NUMBER}&sap-client={u:CLIENT}',
      values: {
        NUMBER: { property: 'erpCreateALDocument:erpObjectId', transform: [], length: 10 },
        CLIENT: { constant: '100', transform: [] },
      },
    },
  },
} as unknown as ErpSystemConfig;

t.test(
  '"Open in SAP" without a read: the address for the object type, none for another, and a value that does not fit told',
  async (t) => {
    const task = { function: 'Rest' } as TaskConfig;
    const after = afterLink(task, SYSTEM, {}, () => new Date()) as NonNullable<ReturnType<typeof afterLink>>;
    t.same(await after(doc({ 'erpCreateALDocument:erpObject': 'BUS2081', 'erpCreateALDocument:erpObjectId': 'A&B' })), {
      properties: {
        'erpTaskStatus:sapUrl':
          'https://sap.example.com/ui#SupplierInvoice-displayAdvanced?SupplierInvoice=A%26B&sap-client=100',
      },
      problems: [],
    });
    t.same(await after(doc({ 'erpCreateALDocument:erpObject': 'BKPF' })), { properties: {}, problems: [] });
    t.equal(openUrl(SYSTEM, doc({})), undefined, 'no object type, no address');
    t.same(
      openUrlReads([SYSTEM, { name: 'OTHER' } as ErpSystemConfig]),
      ['erpCreateALDocument:erpObject', 'erpCreateALDocument:erpObjectId'],
      'what a search asks back for it: the object type and the values from the document',
    );
    t.match(
      await after(
        doc({ 'erpCreateALDocument:erpObject': 'BUS2081', 'erpCreateALDocument:erpObjectId': '12345678901' }),
      ),
      {
        properties: {},
        problems: [
          /^no "Open in SAP" address: erpCreateALDocument:erpObjectId = "12345678901" is longer than the 10 characters/,
        ],
      },
    );
    t.equal(
      afterLink(task, { name: 'S4H' } as ErpSystemConfig, {}, () => new Date()),
      undefined,
      'nothing to do after a link',
    );
  },
);

t.test(
  "failWhen reads a field of the answer itself, or of each row of a table; without SAP's text, the field is named",
  async (t) => {
    const read = (failWhen: Record<string, unknown>) =>
      readSchema.parse({
        function: 'Z_READ',
        parameters: { ID: { constant: '1' } },
        failWhen,
        properties: { 'erpData:vendor': 'VENDOR' },
      });
    const answering = (answer: Record<string, unknown>) => ({
      transport: 'RFC' as const,
      erp: { read: async () => answer, write: async () => answer },
    });
    // A repository without the package's readAt: no time of the read is written.
    const typeOf = (property: string) => (property === 'erpData:readAt' ? undefined : ('string' as const));
    const options = { typeOf, dateFormat: 'YYYY-MM-DD' as const, now: new Date(0) };
    t.same(
      await readBack(
        read({ field: 'TYPE', in: ['E'], message: 'TEXT' }),
        answering({ TYPE: 'E', TEXT: 'locked' }),
        doc({}),
        options,
      ),
      { properties: {}, problems: ["SAP's data could not be read: locked"] },
    );
    t.same(
      await readBack(
        read({ field: 'RETURN.TYPE', in: ['E'], message: 'RETURN.TEXT' }),
        answering({ RETURN: [{ TYPE: 'S' }, { TYPE: 'E' }] }),
        doc({}),
        options,
      ),
      { properties: {}, problems: ["SAP's data could not be read: RETURN.TYPE"] },
    );
    t.same(
      await readBack(
        read({ field: 'TYPE', in: ['E'], message: 'TEXT' }),
        answering({ TYPE: '', VENDOR: '7' }),
        doc({}),
        options,
      ),
      { properties: { 'erpData:vendor': '7' }, problems: [] },
      'no readAt where the property has no such schema',
    );
  },
);
