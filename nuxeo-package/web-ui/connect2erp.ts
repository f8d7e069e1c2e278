import { ErpTab } from './erp-tab.js';

/**
 * The addon's entry: Web UI imports `ui/<package name>.bundle.js` of every installed addon package
 * (nuxeo-web-ui, plugin/web-ui/addon/.../ui/config.jsp and index.js `loadAddons`). It defines the
 * tab and contributes it to the document views of every document and folder with the facet, as
 * Web UI's own tabs are contributed (elements/nuxeo-web-ui-bundle.html: nuxeo-slot-content,
 * nuxeo-filter; the item's name is the page's).
 */
customElements.define(ErpTab.is, ErpTab);

const slots = document.createElement('template');
slots.innerHTML = `
<nuxeo-slot-content name="connect2erpTabItem" slot="DOCUMENT_VIEWS_ITEMS" order="45">
  <template>
    <nuxeo-filter document="[[document]]" facet="fct_erp_http_content">
      <template><nuxeo-page-item name="erp" label="erp.tab.label"></nuxeo-page-item></template>
    </nuxeo-filter>
  </template>
</nuxeo-slot-content>
<nuxeo-slot-content name="connect2erpTabPage" slot="DOCUMENT_VIEWS_PAGES" order="45">
  <template>
    <nuxeo-filter document="[[document]]" facet="fct_erp_http_content">
      <template><nuxeo-erp-tab name="erp" document="[[document]]"></nuxeo-erp-tab></template>
    </nuxeo-filter>
  </template>
</nuxeo-slot-content>`;
// As Web UI's own addons add their slot contents (addons/nuxeo-template-rendering/index.js).
document.head.appendChild(slots.content);
