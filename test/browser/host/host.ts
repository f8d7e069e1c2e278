/**
 * A stand-in for the part of Nuxeo Web UI 3.x around a document's tabs, built from the same
 * published elements Web UI is built from (@nuxeo/nuxeo-elements, @nuxeo/nuxeo-ui-elements,
 * Polymer 3). It does what Web UI does for an addon and nothing more:
 * - exposes the globals Web UI's legacy.js exposes (Polymer, PolymerElement, Nuxeo.*Behavior);
 * - loads the labels from ui/i18n/messages[-<language>].json (Web UI's i18n/i18n.js);
 * - then imports the addon's ui/connect2erp.bundle.js (Web UI's index.js, loadAddons);
 * - reads the document with the `permissions` enricher, as Web UI does for every document
 *   (web-ui-properties.xml);
 * - shows a document's DOCUMENT_VIEWS_ITEMS and DOCUMENT_VIEWS_PAGES slots with the document as
 *   their model, and reads the document again on `document-updated` (elements/nuxeo-browser).
 * What real Web UI adds around it (routing, the drawer, the header, paper-tabs' styling, the
 * session login page) is not here.
 */
import '@polymer/polymer/lib/elements/dom-if.js';
import '@polymer/polymer/lib/elements/dom-repeat.js';
import '@polymer/paper-button/paper-button.js';
import '@polymer/paper-toggle-button/paper-toggle-button.js';
import '@nuxeo/nuxeo-elements/nuxeo-connection.js';
import '@nuxeo/nuxeo-elements/nuxeo-document.js';
import '@nuxeo/nuxeo-ui-elements/nuxeo-filter.js';
import '@nuxeo/nuxeo-ui-elements/nuxeo-slots.js';
import '@nuxeo/nuxeo-ui-elements/widgets/nuxeo-input.js';
import '@nuxeo/nuxeo-ui-elements/widgets/nuxeo-select.js';
import { FormatBehavior } from '@nuxeo/nuxeo-ui-elements/nuxeo-format-behavior.js';
import { I18nBehavior, XHRLocaleResolver } from '@nuxeo/nuxeo-ui-elements/nuxeo-i18n-behavior.js';
import { mixinBehaviors } from '@polymer/polymer/lib/legacy/class.js';
import { Polymer } from '@polymer/polymer/lib/legacy/polymer-fn.js';
import { html } from '@polymer/polymer/lib/utils/html-tag.js';
import { PolymerElement } from '@polymer/polymer/polymer-element.js';

type Global = Record<string, any>;
const global = window as unknown as Global;

// As legacy.js: the globals an addon module is written against.
Object.assign(Polymer, { html, mixinBehaviors });
global.Polymer = Polymer;
global.PolymerElement = PolymerElement;
Object.assign(global.Nuxeo, { I18nBehavior, FormatBehavior });

/** Web UI's nuxeo-page-item (elements/nuxeo-app, not published on npm): a tab's label, by name. */
class PageItem extends mixinBehaviors([I18nBehavior], PolymerElement) {
  static get is(): string {
    return 'nuxeo-page-item';
  }
  static get template(): HTMLTemplateElement {
    return html`<span class="tab">[[i18n(label)]]</span>`;
  }
  static get properties(): Record<string, unknown> {
    return { name: { type: String, reflectToAttribute: true }, label: String };
  }
}

/** The document's views: its tabs, and the page of each, the document given to both as Web UI does. */
class DocumentViews extends PolymerElement {
  static get is(): string {
    return 'stand-in-document-views';
  }
  static get template(): HTMLTemplateElement {
    return html`
      <style>
        #tabs { display: flex; gap: 24px; padding: 12px 16px; border-bottom: 1px solid #ddd; }
        #tabs ::slotted(*), #tabs > * { font-weight: 500; text-transform: uppercase; }
      </style>
      <nuxeo-document id="doc" doc-id="[[docId]]" enrichers="permissions" response="{{document}}"></nuxeo-document>
      <div id="tabs"><nuxeo-slot name="DOCUMENT_VIEWS_ITEMS" model="[[context]]"></nuxeo-slot></div>
      <div id="pages"><nuxeo-slot name="DOCUMENT_VIEWS_PAGES" model="[[context]]"></nuxeo-slot></div>
    `;
  }
  static get properties(): Record<string, unknown> {
    return {
      docId: String,
      document: Object,
      context: { type: Object, computed: '_context(document)' },
    };
  }
  _context(document: unknown): { document: unknown } {
    return { document };
  }
  override ready(): void {
    super.ready();
    const reload = (): Promise<unknown> => (this.$.doc as unknown as { get(): Promise<unknown> }).get();
    this.addEventListener('document-updated', () => void reload());
    void reload();
  }
}

async function start(): Promise<void> {
  const query = new URLSearchParams(location.search);
  global.nuxeo.I18n.language = query.get('lang') ?? 'en';
  global.nuxeo.I18n.localeResolver = XHRLocaleResolver('/nuxeo/ui/i18n');
  await global.nuxeo.I18n.loadLocale();
  // Web UI's own first tab (elements/nuxeo-web-ui-bundle.html, documentViewItem), on every document.
  const own = document.createElement('template');
  own.innerHTML = `<nuxeo-slot-content name="documentViewItem" slot="DOCUMENT_VIEWS_ITEMS" order="10">
    <template><nuxeo-page-item name="view" label="View"></nuxeo-page-item></template>
  </nuxeo-slot-content>`;
  document.head.appendChild(own.content);
  const addon = '/nuxeo/ui/connect2erp.bundle.js';
  await import(addon);
  customElements.define(PageItem.is, PageItem);
  customElements.define(DocumentViews.is, DocumentViews);
  const views = document.createElement(DocumentViews.is) as HTMLElement & { docId: string };
  views.docId = query.get('doc') ?? '';
  document.body.append(views);
}

void start();
