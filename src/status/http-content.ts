/** The facet every connected document carries (spec §2.3), and its seven properties. */
export const HTTP_CONTENT_FACET = 'fct_erp_http_content';
export const HTTP_CONTENT_PROPERTIES = [
  'docId',
  'source',
  'archiveId',
  'compId',
  'created',
  'modified',
  'scanPerformed',
].map((name) => `erpHttpContent:${name}`);

/**
 * What a document SAP stored through the content server carries besides (create, mCreate): its
 * protection, whether every component arrived, and the business objects SAP linked it to on its
 * side, as `reconcile` reads them from SAP's link table.
 */
export const SAP_DOCUMENT_FACET = 'fct_erp_sap_document';
export const SAP_BUSINESS_OBJECTS = 'erpSapDocument:businessObjects';
/** False while a create is under way: a document is served, and shown, once every component arrived. */
export const SAP_COMPLETE = 'erpSapDocument:complete';
