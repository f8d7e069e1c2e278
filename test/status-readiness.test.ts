import t from 'tap';
import { missingValues, READINESS_KEYS } from '../src/status/readiness.js';
import { attemptFailed, done, failed, STATUS_TEXT_MAX } from '../src/status/transitions.js';

/** What a document still needs before its use case can run (src/status/readiness.ts). */

t.test('workflow readiness: start flag, agent type, and a barcode standing in for the archive fields', async (t) => {
  const base = {
    'erpHttpContent:archiveId': 'A1',
    'erpHttpContent:docId': 'd',
    'erpStartWorkflow:erpDocumentTyp': 'ZINV',
    'erpStartWorkflow:erpArchiveObject': 'ZOBJ',
  };
  t.same(missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': true }), [], 'ready');
  t.same(
    missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': false }),
    ['erpStartWorkflow:erpStartWorkflow'],
    'waits while the flag is off',
  );
  t.same(
    missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': true, 'erpStartWorkflow:erpOTyp': 'XX' }),
    ['erpStartWorkflow:erpOTyp'],
    'an unknown agent type',
  );
  t.same(
    missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': true, 'erpStartWorkflow:erpOTyp': 'US' }),
    [],
    'a user agent',
  );
  t.same(
    missingValues('workflow', { 'erpStartWorkflow:erpStartWorkflow': true, 'erpStartWorkflow:erpBarcode': 'B1' }),
    [],
    'a barcode alone is enough (spec §2.3)',
  );
  t.same(
    missingValues('barcode', {
      'erpHttpContent:archiveId': 'A1',
      'erpHttpContent:docId': 'd',
      'erpBarcode:barcode': '',
    }),
    ['erpBarcode:barcode', 'erpBarcode:docTyp'],
  );
});

t.test('readiness reads no property beyond READINESS_KEYS, which a search asks back for it', async (t) => {
  const cases: Array<[keyof typeof READINESS_KEYS, Record<string, unknown>]> = [
    ['link', {}],
    ['barcode', {}],
    ['workflow', { 'erpStartWorkflow:erpOTyp': 'XX' }],
    ['workflow', { 'erpStartWorkflow:erpBarcode': 'B1' }],
  ];
  for (const [useCase, values] of cases) {
    const read = new Set<string>();
    const properties = new Proxy(values, { get: (target, key: string) => (read.add(key), target[key]) });
    missingValues(useCase, properties);
    t.same(
      [...read].filter((key) => !READINESS_KEYS[useCase].includes(key)),
      [],
      `${useCase} ${JSON.stringify(values)}`,
    );
  }
});

t.test(
  'the status facet keeps a readable message and reference: a longer text is cut at 1,000 characters',
  async (t) => {
    const long = 'm'.repeat(5000);
    for (const properties of [attemptFailed(long, 1, undefined), failed(long), done(long, long)]) {
      t.equal((properties['erpTaskStatus:message'] as string).length, STATUS_TEXT_MAX + 1);
      t.match(properties['erpTaskStatus:message'], /^m{1000}…$/);
    }
    t.match(done(long, undefined), { 'erpTaskStatus:erpReference': /^m{1000}…$/, 'erpTaskStatus:message': null });
    t.match(done(undefined, 'short'), { 'erpTaskStatus:erpReference': undefined, 'erpTaskStatus:message': 'short' });
  },
);
