import t from 'tap';
import {
  changedValues,
  dateKind,
  isEditable,
  labelKey,
  mayChange,
  missingKeys,
  openInSapUrl,
  shownMessage,
  storedBySap,
  USE_CASE_FIELDS,
  useCasesOf,
  userInputKeys,
} from '../nuxeo-package/web-ui/erp-tab-model.js';
import { STATUSES } from '../src/status/facet.js';
import { READINESS_KEYS } from '../src/status/readiness.js';

/** What the ERP tab works out from a document, by the job's own rules (the page itself: test/browser/). */

const LINK = ['fct_erp_http_content', 'fct_erp_create_al_document'];
const WORKFLOW = ['fct_erp_http_content', 'fct_erp_start_workflow'];

t.test('the use cases are those whose facet the document carries', async (t) => {
  t.same(useCasesOf(LINK), ['link']);
  t.same(useCasesOf([...LINK, 'fct_erp_barcode']), ['link', 'barcode']);
  t.same(useCasesOf(['fct_erp_http_content']), []);
});

t.test('values can be changed while the document waits, not while it is sent nor once it is linked', async (t) => {
  const editable = Object.fromEntries(
    STATUSES.map((status) => [status, isEditable({ 'erpTaskStatus:status': status })]),
  );
  t.same(editable, {
    PENDING_INPUT: true,
    READY: true,
    IN_PROGRESS: false,
    RETRY: true,
    DONE: false,
    FAILED: true,
  });
  t.ok(isEditable({}), 'not labelled yet');
});

t.test('only a user with WriteProperties may change a document, and never a version or one in the trash', async (t) => {
  const may = (permissions: string[], more = {}): boolean => mayChange({ contextParameters: { permissions }, ...more });
  t.ok(may(['Read', 'ReadWrite', 'WriteProperties']));
  t.notOk(may(['Read', 'Browse']));
  t.notOk(may(['WriteProperties'], { isVersion: true }));
  t.notOk(may(['WriteProperties'], { isTrashed: true }));
  t.notOk(mayChange({}), 'without the permissions enricher, no form');
});

t.test("the values marked missing are the job's, for every use case the document carries", async (t) => {
  const base = { 'erpHttpContent:archiveId': 'Z1', 'erpHttpContent:docId': 'd' };
  t.same(missingKeys(LINK, { ...base, 'erpCreateALDocument:erpObject': 'BKPF' }), [
    'erpCreateALDocument:erpObjectId',
    'erpCreateALDocument:erpArchiveObject',
  ]);
  t.same(missingKeys(WORKFLOW, { ...base, 'erpStartWorkflow:erpBarcode': 'B1' }), [
    'erpStartWorkflow:erpStartWorkflow',
  ]);
  t.same(
    missingKeys(WORKFLOW, { ...base, 'erpStartWorkflow:erpStartWorkflow': true, 'erpStartWorkflow:erpOTyp': 'X' }),
    ['erpStartWorkflow:erpOTyp', 'erpStartWorkflow:erpDocumentTyp', 'erpStartWorkflow:erpArchiveObject'],
  );
  t.same(missingKeys([...LINK, 'fct_erp_barcode'], base).length, 5, 'link and bar code, each key once');
});

t.test('every value the job reads for a use case is a field of its form', async (t) => {
  for (const [useCase, keys] of Object.entries(READINESS_KEYS)) {
    const fields = USE_CASE_FIELDS[useCase as keyof typeof USE_CASE_FIELDS].map((f) => f.key);
    const base = keys.filter((key) => key.startsWith('erpHttpContent:'));
    t.same(
      keys.filter((key) => !fields.includes(key)),
      base,
      `${useCase}: only the connection's values are not in the form (they are read-only)`,
    );
  }
  t.equal(labelKey('erpCreateALDocument:erpObjectId'), 'erp.property.erpCreateALDocument.erpObjectId');
});

t.test('a save sends what changed, an emptied value as null', async (t) => {
  const original = { a: 'x', b: 'y', c: null, d: true };
  t.same(changedValues(original, { a: 'x', b: 'z', c: '', d: false }), { b: 'z', d: false });
  t.same(changedValues(original, { a: '' }), { a: null });
  t.same(changedValues(original, { c: undefined }), {});
});

t.test(
  "what users may change: the mapping entry's list as the intake wrote it, else the defaults and what the job waits for",
  async (t) => {
    t.same(
      userInputKeys(LINK, {
        'erpTaskStatus:userInput': 'erpCreateALDocument:erpObjectId,erpCreateALDocument:erpDescription',
      }),
      ['erpCreateALDocument:erpObjectId', 'erpCreateALDocument:erpDescription'],
    );
    t.same(userInputKeys(LINK, { 'erpTaskStatus:userInput': '' }), [], 'an entry that lets users change nothing');
    t.same(
      userInputKeys(LINK, {
        'erpHttpContent:archiveId': 'Z1',
        'erpHttpContent:docId': 'x',
        'erpCreateALDocument:erpObject': 'BKPF',
      }),
      ['erpCreateALDocument:erpObjectId', 'erpCreateALDocument:erpArchiveObject'],
      'labelled before the list was written',
    );
  },
);

t.test("the job's message is shown unless it only lists the values it waits for", async (t) => {
  const pending = { 'erpTaskStatus:status': 'PENDING_INPUT' };
  t.equal(
    shownMessage({ ...pending, 'erpTaskStatus:message': 'waiting for erpCreateALDocument:erpObjectId' }),
    undefined,
  );
  t.equal(
    shownMessage({
      ...pending,
      'erpTaskStatus:message': 'waiting for erpHttpContent:source (no ERP system "X" with a RFC connection)',
    }),
    'waiting for erpHttpContent:source (no ERP system "X" with a RFC connection)',
    'what only an administrator can mend stays',
  );
  t.equal(shownMessage({ 'erpTaskStatus:status': 'FAILED', 'erpTaskStatus:message': 'OA403' }), 'OA403');
  t.equal(shownMessage({ 'erpTaskStatus:status': 'DONE' }), undefined);
});

t.test(
  'dates and times are told from other text; "Open in SAP" only for a linked document and a web address',
  async (t) => {
    t.equal(dateKind('2026-11-20'), 'date');
    t.equal(dateKind('2026-11-20T05:00:00.000Z'), 'dateTime');
    t.equal(dateKind('2026-13-45T99:99'), undefined);
    t.equal(dateKind('51056001012026'), undefined);
    t.equal(dateKind(3), undefined);
    const done = { 'erpTaskStatus:status': 'DONE' };
    t.equal(
      openInSapUrl({ ...done, 'erpTaskStatus:sapUrl': 'https://sap.example.com/x' }),
      'https://sap.example.com/x',
    );
    t.equal(openInSapUrl({ ...done, 'erpTaskStatus:sapUrl': 'javascript:alert(1)' }), undefined);
    t.equal(openInSapUrl({ ...done, 'erpTaskStatus:sapUrl': 'https://[bad' }), undefined);
    t.equal(
      openInSapUrl({ 'erpTaskStatus:status': 'READY', 'erpTaskStatus:sapUrl': 'https://sap.example.com/x' }),
      undefined,
    );
  },
);

t.test(
  "a document with the feature's facet and no use case's is one SAP stored through the content server",
  async (t) => {
    t.ok(storedBySap(['fct_erp_http_content', 'fct_erp_sap_document']));
    t.ok(storedBySap(['fct_erp_http_content']), 'a component of one');
    t.notOk(storedBySap(LINK), "the job's, and its archive-link folder");
    t.notOk(storedBySap([]));
  },
);
