import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { NO_BLOBS, type StoredDoc } from '../../sandbox/repository/store.js';
import { MAPPING, sandboxEnv } from '../helpers/env.js';
import { invoiceEnv, storedBySap } from '../helpers/sap-data.js';
import { browserFor, webUiFolder } from '../helpers/web-ui.js';

// A browser and a page build: 11 s on an idle 2-core machine, several times that beside another suite.
t.setTimeout(240_000);

/**
 * The ERP tab in Debian's Chromium, loaded into a stand-in for Web UI built from Nuxeo's published
 * elements, against the repository sandbox: what a user sees and does, and what the job does next.
 * `SCREENSHOTS=docs/images` also writes the pictures the README shows.
 */
const ADMIN = { username: 'Administrator', password: 'Administrator' };
const OBJECT_ID = 'erpCreateALDocument:erpObjectId';
const screenshots = process.env.SCREENSHOTS;

async function shoot(page: Page, name: string): Promise<void> {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(screenshots, name), fullPage: true });
}

/** A time as Web UI shows it to an English-speaking user in Berlin (moment's LLL). */
function berlin(iso: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: 'Europe/Berlin',
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      hour12: true,
    })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  );
  return `${parts.month} ${parts.day}, ${parts.year} ${parts.hour}:${parts.minute} ${parts.dayPeriod}`;
}

async function open(page: Page, baseUrl: string, uid: string, lang = 'en'): Promise<void> {
  await page.goto(`${baseUrl}/ui/index.html?doc=${uid}&lang=${lang}`);
  await page.locator('nuxeo-erp-tab #status').filter({ hasText: /\S/ }).waitFor();
}

t.test(
  "a user completes a waiting invoice in the ERP tab, the next run links it, the tab then shows it done, opens it in SAP and shows SAP's data",
  async (t) => {
    const env = await invoiceEnv(t, 'RFC', { webUiDir: await webUiFolder() });
    const uid = await env.upload('ERP/Invoices', 'invoice-4711.pdf');
    await env.run();
    t.equal(env.props(uid)['erpTaskStatus:status'], 'PENDING_INPUT');
    t.equal(env.props(uid)['erpTaskStatus:userInput'], OBJECT_ID, 'the intake wrote who may change what');
    const context = await browserFor(t, ADMIN, 'Europe/Berlin');
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await open(page, env.baseUrl, uid);
    const tab = page.locator('nuxeo-erp-tab');
    t.equal(
      await page.locator('nuxeo-page-item[name="erp"] .tab').textContent(),
      'ERP',
      'the tab is there, labelled ERP',
    );
    t.equal(await tab.locator('#status').textContent(), 'Waiting for your input: Object id (e.g. invoice number)');
    t.equal(await tab.locator('#message').count(), 0, "the job's own words for it (property names) are not shown");
    t.equal(await tab.locator('.row', { hasText: 'Attempts' }).count(), 0, 'no attempts yet: none shown');
    const row = tab.locator(`.row[data-key="${OBJECT_ID}"]`);
    t.match(await row.getAttribute('class'), /missing/, 'the value the job waits for is marked');
    t.equal(await tab.locator('nuxeo-input').count(), 1, 'only the value users give is a field');
    t.equal(
      await tab.locator('.row[data-key="erpCreateALDocument:erpClient"] .value').textContent(),
      '100',
      "the administrator's values are shown, not editable",
    );
    const created = String(env.props(uid)['erpHttpContent:created']);
    t.equal(
      await tab
        .locator('.row')
        .filter({ has: page.locator('.label', { hasText: /^Created$/ }) })
        .locator('span')
        .nth(1)
        .textContent(),
      berlin(created),
      "a time in the user's language and time zone, as Web UI shows times",
    );
    await shoot(page, 'erp-tab-waiting.png');

    await row.locator('nuxeo-input input').fill('51056001012026');
    t.notMatch(await row.getAttribute('class'), /missing/, 'the mark goes as the value is typed');
    await tab.locator('#save').click();
    await tab.locator('#status').filter({ hasText: 'Complete' }).waitFor();
    t.equal(env.props(uid)[OBJECT_ID], '51056001012026', 'saved in the repository');
    t.equal(await tab.locator('#message').count(), 0, 'no stale "waiting for" below it');
    await shoot(page, 'erp-tab-complete.png');

    const run = await env.run();
    t.equal(run.tasks.link.counts.DONE, 1, 'the next run links it');
    await open(page, env.baseUrl, uid);
    t.equal(await tab.locator('#status').textContent(), 'Linked in SAP');
    t.match(await tab.locator('.row', { hasText: 'SAP reference' }).textContent(), /BUS2081 51056001012026/);
    t.equal(await tab.locator('nuxeo-input').count(), 0, 'nothing can be changed once it is linked');
    t.equal(await tab.locator('#save').count(), 0);
    t.equal(
      await tab.locator('#openInSap').getAttribute('href'),
      'https://sap.example.com/sap/bc/gui/sap/its/webgui?~transaction=*MIR4%20RBKP-BELNR=5105600101;RBKP-GJAHR=2026;DYNP_OKCODE=/00',
    );
    t.equal(await tab.locator('#openInSap').textContent(), 'Open in SAP');
    const sapData = await tab.locator('.sap-data').allTextContents();
    t.match(sapData, [
      /^Vendor0000100001$/,
      /^Company code1000$/,
      /^Amount€1,190\.00$/,
      /^Document dateNovember 20, 2026$/,
      /^Posting dateNovember 23, 2026$/,
      /^ReferenceRE-2026-4711$/,
      /^Read from SAP[A-Z][a-z]+ \d/,
    ]);
    t.equal(
      await tab.locator('.row', { hasText: 'Last attempt' }).locator('span').nth(1).textContent(),
      berlin(String(env.props(uid)['erpTaskStatus:lastAttempt'])),
    );
    await shoot(page, 'erp-tab-done.png');

    await open(page, env.baseUrl, uid, 'de');
    t.equal(await tab.locator('#status').textContent(), 'In SAP verknüpft', 'in German');
    t.equal(await tab.locator('#openInSap').textContent(), 'In SAP öffnen');
    t.match(await tab.locator('.sap-data', { hasText: 'Betrag' }).textContent(), /1\.190,00\s€/);
    t.same(errors, [], 'no error in the page');
  },
);

t.test(
  'a workflow document: a switch to start it and a choice of the six agent types; a failed save keeps what was typed',
  async (t) => {
    // The workflow entry of the shipped mapping, with the start left to a user.
    const mapping = MAPPING.replace(
      '"erpStartWorkflow:erpStartWorkflow": true',
      '"erpStartWorkflow:erpStartWorkflow": false',
    );
    const env = await sandboxEnv(t, { webUiDir: await webUiFolder(), mapping });
    const uid = await env.upload('ERP/Workflow', 'order.pdf');
    await env.run();
    const page = await (await browserFor(t, ADMIN)).newPage();
    await open(page, env.baseUrl, uid, 'de');
    const tab = page.locator('nuxeo-erp-tab');
    const start = tab.locator('.row[data-key="erpStartWorkflow:erpStartWorkflow"]');
    t.match(await start.getAttribute('class'), /missing/, 'not started until a user says so');
    t.match(await tab.locator('#status').textContent(), /^Wartet auf Ihre Eingabe: Workflow starten/);
    const choice = tab.locator('nuxeo-select[data-key="erpStartWorkflow:erpOTyp"]');
    t.same(
      await choice.evaluate((el) => (el as unknown as { options: Array<{ id: string }> }).options.map((o) => o.id)),
      ['US', 'C', 'O', 'P', 'S', 'A'],
    );
    await start.locator('paper-toggle-button').click();
    await choice.click();
    await choice.locator('paper-item', { hasText: 'O – Organisationseinheit' }).click();
    t.notMatch(await start.getAttribute('class'), /missing/);
    await shoot(page, 'erp-tab-workflow.png');

    const entity = JSON.stringify({ 'entity-type': 'exception', status: 503, message: 'the repository is restarting' });
    env.sandbox.faults.add({
      method: 'PUT',
      path: `/id/${uid}`,
      status: 503,
      body: entity,
      headers: { 'Content-Type': 'application/json' },
      times: 1,
    });
    await tab.locator('#save').click();
    await tab.locator('#error').filter({ hasText: /\S/ }).waitFor();
    t.equal(await tab.locator('#error').textContent(), 'Nicht gespeichert: the repository is restarting');
    t.not(env.props(uid)['erpStartWorkflow:erpStartWorkflow'], true, 'nothing written');
    t.equal(await start.locator('paper-toggle-button').getAttribute('aria-pressed'), 'true', 'the switch is still on');
    await tab.locator('#save').click();
    await tab.locator('#status').filter({ hasText: 'Vollständig' }).waitFor();
    t.equal(env.props(uid)['erpStartWorkflow:erpStartWorkflow'], true, 'saved on the second try');
    t.equal(env.props(uid)['erpStartWorkflow:erpOTyp'], 'O', 'the agent type chosen');
    t.equal(await tab.locator('#error').textContent(), '');
  },
);

t.test('the tab is only on documents with the facet, and read-only while the job sends the document', async (t) => {
  const env = await sandboxEnv(t, {
    webUiDir: await webUiFolder(),
    users: { reader: { password: 'reader', groups: ['members'] } },
  });
  const uid = await env.upload('ERP/Invoices', 'invoice-1.pdf');
  await env.run();
  const page = await (await browserFor(t, ADMIN)).newPage();
  const folder = env.sandbox.store.getByPath('/default-domain/workspaces/ERP') as { uid: string };
  await page.goto(`${env.baseUrl}/ui/index.html?doc=${folder.uid}`);
  // Web UI's own tab is stamped in the same pass as an addon's: once it is there, the ERP tab would be too.
  await page.locator('nuxeo-page-item[name="view"]').waitFor();
  t.equal(await page.locator('nuxeo-page-item[name="erp"]').count(), 0, 'no ERP tab on a folder without the facet');
  t.equal(await page.locator('nuxeo-erp-tab').count(), 0);
  const parent = env.sandbox.store.get(env.sandbox.store.get(uid)?.parentId as string) as StoredDoc;
  t.ok(parent.facets.includes('fct_erp_http_content'), 'the archive-link folder carries the facet');
  await open(page, env.baseUrl, parent.uid);
  t.equal(await page.locator('nuxeo-page-item[name="erp"]').count(), 1, 'and shows the tab');

  const reader = await (await browserFor(t, { username: 'reader', password: 'reader' })).newPage();
  await open(reader, env.baseUrl, uid);
  t.match(await reader.locator('nuxeo-erp-tab #locked').textContent(), /may read this document but not change/);
  t.equal(await reader.locator('nuxeo-erp-tab nuxeo-input').count(), 0, 'a user who may only read gets no form');
  await shoot(reader, 'erp-tab-read-only.png');

  env.fill(uid, { 'erpTaskStatus:status': 'IN_PROGRESS' });
  await open(page, env.baseUrl, uid);
  const tab = page.locator('nuxeo-erp-tab');
  t.equal(await tab.locator('#status').textContent(), 'Being sent to SAP');
  t.match(await tab.locator('#locked').textContent(), /cannot be changed meanwhile/);
  t.equal(await tab.locator('nuxeo-input').count(), 0);
  await shoot(page, 'erp-tab-in-progress.png');

  env.fill(uid, {
    'erpTaskStatus:status': 'RETRY',
    'erpTaskStatus:attempts': 2,
    'erpTaskStatus:message': 'ARCHIV_CONNECTION_INSERT: SAP did not answer within 30000 ms',
    'erpTaskStatus:nextAttempt': '2026-11-26T09:30:00.000Z',
  });
  await open(page, env.baseUrl, uid);
  t.equal(await tab.locator('#status').textContent(), 'SAP did not take it yet: the connector tries again');
  t.equal(await tab.locator('#message').textContent(), 'ARCHIV_CONNECTION_INSERT: SAP did not answer within 30000 ms');
  t.match(
    await tab.locator('.row', { hasText: 'Attempts' }).textContent(),
    /Attempts\s*2/,
    'shown once there were any',
  );
  t.match(await tab.locator('.row', { hasText: 'Next attempt' }).textContent(), /November 26, 2026 9:30 AM/);
  await shoot(page, 'erp-tab-retry.png');
});

t.test(
  'a save over a change made meanwhile (the job claiming the document) is refused, not written over',
  async (t) => {
    const env = await sandboxEnv(t, { webUiDir: await webUiFolder() });
    const uid = await env.upload('ERP/Invoices', 'invoice-2.pdf');
    await env.run();
    const page = await (await browserFor(t, ADMIN)).newPage();
    await open(page, env.baseUrl, uid);
    const tab = page.locator('nuxeo-erp-tab');
    // What a run's claim does: a write with the document's change token, which moves it on.
    const doc = env.sandbox.store.get(uid) as StoredDoc;
    env.sandbox.store.update(env.sandbox.actor(), doc, { 'erpTaskStatus:status': 'IN_PROGRESS' }, NO_BLOBS, {
      changeToken: env.sandbox.store.changeToken(doc),
    });
    await tab.locator(`.row[data-key="${OBJECT_ID}"] nuxeo-input input`).fill('100019000000222023');
    await tab.locator('#save').click();
    await tab.locator('#error').filter({ hasText: /\S/ }).waitFor();
    t.match(await tab.locator('#error').textContent(), /^Not saved: the document changed meanwhile/);
    t.not(env.props(uid)[OBJECT_ID], '100019000000222023', 'nothing written over the claim');
    await open(page, env.baseUrl, uid);
    t.equal(await tab.locator('#status').textContent(), 'Being sent to SAP', 'opened again, it says where it stands');
  },
);

t.test(
  'a document SAP stored through the content server shows as stored by SAP, with what SAP linked it to once known',
  async (t) => {
    const env = await sandboxEnv(t, { webUiDir: await webUiFolder() });
    const stored = { uid: storedBySap(env, 'SAPSTORED0001') };
    const page = await (await browserFor(t, ADMIN)).newPage();
    await open(page, env.baseUrl, stored.uid);
    const tab = page.locator('nuxeo-erp-tab');
    t.equal(await tab.locator('#status').textContent(), 'Stored by SAP');
    t.match(await tab.locator('#businessObjects').textContent(), /^not known yet: .*connect2erp reconcile/);
    t.equal(await tab.locator('h3', { hasText: 'Values for SAP' }).count(), 0, 'no values to give: SAP has them');
    t.equal(await tab.locator('h3', { hasText: 'Data from SAP' }).count(), 0, 'none read');

    env.fill(stored.uid, { 'erpSapDocument:businessObjects': 'BUS2081 51056001012026' });
    await open(page, env.baseUrl, stored.uid);
    t.equal(await tab.locator('#businessObjects').textContent(), 'BUS2081 51056001012026', 'as reconcile wrote it');
    await shoot(page, 'erp-tab-stored-by-sap.png');

    env.fill(stored.uid, { 'erpSapDocument:complete': false });
    await open(page, env.baseUrl, stored.uid, 'de');
    t.equal(await tab.locator('#status').textContent(), 'Wird von SAP abgelegt: noch nicht alle Teile angekommen');
  },
);
