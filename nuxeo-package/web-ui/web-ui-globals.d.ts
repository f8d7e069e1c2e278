/**
 * What Nuxeo Web UI 3.x puts on `window` for addons (nuxeo/nuxeo-web-ui, legacy.js; the
 * nuxeo-coldstorage addon builds against the same globals): the addon bundles none of it, so
 * that it runs with the server's own copy of Polymer and Nuxeo's elements.
 */

interface PolymerElementLike extends HTMLElement {
  $: Record<string, HTMLElement>;
  i18n(key: string, ...args: unknown[]): string;
  formatDateTime(date: unknown): string;
  formatDate(date: unknown, format?: string, timezone?: string): string;
  /** I18nBehavior's language of the user (`en`, `de`), what FormatBehavior formats dates with. */
  _languageCode(): string;
}

type PolymerElementClass = new () => PolymerElementLike;
/** A Polymer 1.x-style behavior object (I18nBehavior, FormatBehavior). */
type Behavior = object;

declare const Polymer: {
  html(strings: TemplateStringsArray, ...values: unknown[]): HTMLTemplateElement;
  mixinBehaviors(behaviors: Behavior[], base: PolymerElementClass): PolymerElementClass;
};

declare const Nuxeo: {
  Element: PolymerElementClass;
  I18nBehavior: Behavior;
  FormatBehavior: Behavior;
};

/** `<nuxeo-document>` of @nuxeo/nuxeo-elements: `put()` sends `data` to `/api/v1/id/{docId}`. */
interface NuxeoDocumentElement extends HTMLElement {
  docId: string;
  data: unknown;
  put(): Promise<unknown>;
}
