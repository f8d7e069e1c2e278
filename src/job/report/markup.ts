/** Markup made by `html`: safe to put on a page as it is. */
export class Html {
  constructor(readonly text: string) {}
}

/** What may be put into `html`: markup as it is, anything else as escaped text. */
type Interpolated = Html | readonly Html[] | string | number | undefined;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const escaped = (value: Interpolated): string => {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map((part: Html) => part.text).join('');
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]);
};

/**
 * A tagged template for HTML: the template's own text is markup, every value put into it is
 * escaped unless it was made by `html` itself. Every value on a report page comes from documents or
 * servers, so escaping cannot be forgotten at one of them.
 */
export function html(template: TemplateStringsArray, ...values: Interpolated[]): Html {
  return new Html(template.reduce((out, text, i) => `${out}${escaped(values[i - 1])}${text}`));
}
