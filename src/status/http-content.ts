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
