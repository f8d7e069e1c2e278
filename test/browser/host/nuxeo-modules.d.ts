// Nuxeo's and Polymer's legacy modules the stand-in reads names from; they ship no type declarations.
declare module '@nuxeo/nuxeo-ui-elements/nuxeo-i18n-behavior.js' {
  export const I18nBehavior: object;
  export function XHRLocaleResolver(folder: string): () => Promise<void>;
}
declare module '@nuxeo/nuxeo-ui-elements/nuxeo-format-behavior.js' {
  export const FormatBehavior: object;
}
