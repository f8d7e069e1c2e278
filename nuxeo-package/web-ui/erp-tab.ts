import { STATUS, STATUS_FACET } from '../../src/status/facet.js';
import { HTTP_CONTENT_PROPERTIES, SAP_BUSINESS_OBJECTS, SAP_COMPLETE } from '../../src/status/http-content.js';
import {
  changedValues,
  dateKind,
  isEditable,
  isEmpty,
  labelKey,
  mayChange,
  missingKeys,
  openInSapUrl,
  SAP_DATA_KEYS,
  SAP_DATES,
  shownMessage,
  storedBySap,
  USE_CASE_FIELDS,
  userInputKeys,
  useCasesOf,
  type Changeable,
  type Field,
  type Properties,
} from './erp-tab-model.js';

/** A document as Web UI hands it to a tab: its REST entity, properties of every schema, its enrichers. */
interface DocumentEntity extends Changeable {
  uid: string;
  changeToken?: string;
  facets: string[];
  properties: Properties;
}

/** A field as the template shows it: what it is, its value, and whether the job waits for it. */
interface FieldView extends Field {
  label: string;
  value: unknown;
  missing: boolean;
  /** This user may change it now: the document waits, they may write it, the administrator lets users give it. */
  editable: boolean;
  text: boolean;
  toggle: boolean;
  choice: boolean;
  choices?: Array<{ id: string; label: string }>;
}

const template = Polymer.html`
  <style>
    :host { display: block; padding: 16px; }
    h3 { margin: 24px 0 8px; font-weight: 500; }
    .row { display: grid; grid-template-columns: 300px minmax(0, 420px); align-items: baseline; gap: 12px; margin: 6px 0; }
    .label { color: var(--nuxeo-secondary-color, #555); }
    .missing .label { color: var(--nuxeo-warn-text, #b00020); font-weight: 500; }
    .missing .label::after { content: ' *'; }
    .actions { display: flex; align-items: center; gap: 16px; margin: 16px 0; }
    .status { font-weight: 500; }
    .error { color: var(--nuxeo-warn-text, #b00020); }
  </style>
  <nuxeo-document id="doc" doc-id="[[document.uid]]"></nuxeo-document>

  <h3>[[i18n('erp.tab.status')]]</h3>
  <div class="row"><span class="label">[[i18n('erp.status.label')]]</span>
    <span class="status" id="status">[[_statusText(document, i18n)]]</span></div>
  <template is="dom-if" if="[[_message(document)]]">
    <div class="row"><span class="label">[[i18n('erp.status.message')]]</span>
      <span id="message">[[_message(document)]]</span></div>
  </template>
  <template is="dom-if" if="[[_storedBySap(document)]]">
    <div class="row"><span class="label">[[_businessObjectsLabel(i18n)]]</span>
      <span id="businessObjects">[[_businessObjects(document, i18n)]]</span></div>
  </template>
  <template is="dom-repeat" items="[[_statusRows(document, i18n)]]" as="row">
    <div class="row"><span class="label">[[row.label]]</span><span>[[row.value]]</span></div>
  </template>
  <template is="dom-if" if="[[_openUrl(document)]]">
    <div class="row"><span class="label"></span>
      <a id="openInSap" href$="[[_openUrl(document)]]" target="_blank" rel="noopener noreferrer">[[i18n('erp.openInSap')]]</a></div>
  </template>

  <template is="dom-if" if="[[_hasSapData(document)]]">
    <h3>[[i18n('erp.tab.sapData')]]</h3>
    <template is="dom-repeat" items="[[_sapData(document, i18n)]]" as="row">
      <div class="row sap-data"><span class="label">[[row.label]]</span><span>[[row.value]]</span></div>
    </template>
  </template>

  <template is="dom-if" if="[[!_storedBySap(document)]]">
  <h3>[[i18n('erp.tab.values')]]</h3>
  <template is="dom-if" if="[[!editable]]">
    <p id="locked">[[_lockedText(document, i18n)]]</p>
  </template>
  <template is="dom-repeat" items="[[_fields(document, values, editable, i18n)]]" as="field">
    <div class$="row [[_missingClass(field.missing)]]" data-key$="[[field.key]]">
      <span class="label">[[field.label]]</span>
      <template is="dom-if" if="[[!field.editable]]"><span class="value">[[_display(field, i18n)]]</span></template>
      <template is="dom-if" if="[[_editable(field.editable, field.text)]]">
        <nuxeo-input value="[[field.value]]" data-key$="[[field.key]]" aria-label$="[[field.label]]"
          on-value-changed="_typed"></nuxeo-input>
      </template>
      <template is="dom-if" if="[[_editable(field.editable, field.toggle)]]">
        <paper-toggle-button checked="[[field.value]]" data-key$="[[field.key]]" aria-label$="[[field.label]]"
          on-checked-changed="_toggled"></paper-toggle-button>
      </template>
      <template is="dom-if" if="[[_editable(field.editable, field.choice)]]">
        <nuxeo-select options="[[field.choices]]" selected="[[field.value]]" data-key$="[[field.key]]"
          aria-label$="[[field.label]]" on-selected-changed="_chosen"></nuxeo-select>
      </template>
    </div>
  </template>
  <template is="dom-if" if="[[editable]]">
    <div class="actions">
      <paper-button id="save" raised on-tap="_save" disabled$="[[!_canSave(document, values, saving)]]">[[i18n('erp.save')]]</paper-button>
      <span class="error" id="error" role="alert">[[error]]</span>
    </div>
  </template>

  </template>

  <h3>[[i18n('erp.tab.connection')]]</h3>
  <template is="dom-repeat" items="[[_connection(document, i18n)]]" as="row">
    <div class="row"><span class="label">[[row.label]]</span><span>[[row.value]]</span></div>
  </template>
`;

/**
 * The ERP tab (spec §2.3, §3): the facet's values read-only, the use-case values editable while
 * the document waits (the values the job still needs marked), and the status in words.
 */
export class ErpTab extends Polymer.mixinBehaviors([Nuxeo.I18nBehavior, Nuxeo.FormatBehavior], Nuxeo.Element) {
  // `declare`: a class field would hide the property Polymer defines (esbuild emits fields as own properties).
  declare document: DocumentEntity | undefined;
  declare values: Record<string, unknown>;
  declare editable: boolean;
  declare saving: boolean;
  declare error: string;

  static get is(): string {
    return 'nuxeo-erp-tab';
  }

  static get template(): HTMLTemplateElement {
    return template;
  }

  static get properties(): Record<string, unknown> {
    return {
      document: { type: Object, observer: '_documentChanged' },
      /** The use-case values as the user has them in the form. */
      values: { type: Object, value: () => ({}) },
      editable: { type: Boolean, value: false },
      /** A save under way: a second click would abort it (nuxeo-resource cancels the request in flight). */
      saving: { type: Boolean, value: false },
      error: { type: String, value: '' },
    };
  }

  _documentChanged(document: DocumentEntity | undefined): void {
    const properties = document?.properties ?? {};
    const keys = useCasesOf(document?.facets ?? []).flatMap((useCase) => USE_CASE_FIELDS[useCase].map((f) => f.key));
    this.values = Object.fromEntries(keys.map((key) => [key, properties[key] ?? null]));
    this.editable = document !== undefined && isEditable(properties) && mayChange(document);
    this.error = '';
  }

  _fields(document: DocumentEntity | undefined, values: Record<string, unknown>, editable: boolean): FieldView[] {
    if (document === undefined) return [];
    const missing = missingKeys(document.facets, { ...document.properties, ...values });
    const userInput = editable ? userInputKeys(document.facets, document.properties) : [];
    return useCasesOf(document.facets).flatMap((useCase) =>
      USE_CASE_FIELDS[useCase].map((field) => ({
        ...field,
        label: this.i18n(labelKey(field.key)),
        value: values[field.key],
        missing: missing.includes(field.key),
        editable: userInput.includes(field.key),
        text: field.kind === 'text',
        toggle: field.kind === 'switch',
        choice: field.kind === 'choice',
        choices: field.options?.map((id) => ({ id, label: `${id} – ${this.i18n(`erp.orgType.${id}`)}` })),
      })),
    );
  }

  _statusText(document: DocumentEntity | undefined): string {
    if (document === undefined) return '';
    if (storedBySap(document.facets))
      return this.i18n(
        document.properties[SAP_COMPLETE] === false ? 'erp.status.storingBySap' : 'erp.status.storedBySap',
      );
    if (!document.facets.includes(STATUS_FACET) || !document.properties[STATUS.status])
      return this.i18n('erp.status.none');
    const status = String(document.properties[STATUS.status]);
    if (status !== 'PENDING_INPUT') return this.i18n(`erp.status.${status}`);
    const missing = missingKeys(document.facets, document.properties);
    // Filled in since the job looked: it moves on at its next run, unless it waits for more than values.
    if (missing.length === 0) return this.i18n('erp.status.complete');
    return this.i18n('erp.status.PENDING_INPUT', missing.map((key) => this.i18n(labelKey(key))).join(', '));
  }

  /** The reference, the attempts when there were any, and the attempts' times in the user's language and time zone. */
  _statusRows(document: DocumentEntity | undefined): Array<{ label: string; value: string }> {
    const properties = document?.properties ?? {};
    const attempts = Number(properties[STATUS.attempts] ?? 0);
    const rows: Array<[string, unknown]> = [
      ['erp.status.erpReference', properties[STATUS.erpReference]],
      ['erp.status.attempts', attempts > 0 ? attempts : undefined],
      ['erp.status.lastAttempt', properties[STATUS.lastAttempt]],
      ['erp.status.nextAttempt', properties[STATUS.nextAttempt]],
    ];
    return rows
      .filter(([, value]) => !isEmpty(value))
      .map(([key, value]) => ({ label: this.i18n(key), value: this._text(value) }));
  }

  _message(document: DocumentEntity | undefined): string {
    return (document && shownMessage(document.properties)) ?? '';
  }

  _storedBySap(document: DocumentEntity | undefined): boolean {
    return document !== undefined && storedBySap(document.facets);
  }

  _businessObjectsLabel(): string {
    return this.i18n(labelKey(SAP_BUSINESS_OBJECTS));
  }

  /** What SAP linked a document it stored to, as `reconcile` last read SAP's link table; not known before. */
  _businessObjects(document: DocumentEntity | undefined): string {
    const objects = document?.properties[SAP_BUSINESS_OBJECTS];
    return isEmpty(objects) ? this.i18n('erp.status.businessObjectsUnknown') : String(objects);
  }

  _openUrl(document: DocumentEntity | undefined): string {
    return (document && openInSapUrl(document.properties)) ?? '';
  }

  /** SAP's data read after the link: each value the document has, the amount in the user's number format with its currency. */
  _sapData(document: DocumentEntity | undefined): Array<{ label: string; value: string }> {
    const properties = document?.properties ?? {};
    // The currency goes with the amount; alone (a purchase order's), it has a row of its own.
    const shown = (key: string): boolean =>
      !isEmpty(properties[key]) && !(key === 'erpData:currency' && !isEmpty(properties['erpData:amount']));
    return SAP_DATA_KEYS.filter(shown).map((key) => ({
      label: this.i18n(labelKey(key)),
      value: this._sapValue(key, properties),
    }));
  }

  _sapValue(key: string, properties: Properties): string {
    if (key === 'erpData:amount') return this._amount(properties[key], properties['erpData:currency']);
    return SAP_DATES.includes(key)
      ? this.formatDate(properties[key], undefined, 'Etc/UTC')
      : this._text(properties[key]);
  }

  _hasSapData(document: DocumentEntity | undefined): boolean {
    return SAP_DATA_KEYS.some((key) => !isEmpty(document?.properties[key]));
  }

  _amount(amount: unknown, currency: unknown): string {
    const language = this._languageCode();
    try {
      if (typeof currency === 'string' && currency !== '')
        return new Intl.NumberFormat(language, { style: 'currency', currency }).format(Number(amount));
    } catch {
      // A currency code Intl does not know (SAP has its own): the number, then the code.
    }
    const number = new Intl.NumberFormat(language, { minimumFractionDigits: 2 }).format(Number(amount));
    return isEmpty(currency) ? number : `${number} ${String(currency)}`;
  }

  _lockedText(document: DocumentEntity | undefined): string {
    const status = document?.properties[STATUS.status];
    if (status === 'DONE') return this.i18n('erp.locked.done');
    return this.i18n(status === 'IN_PROGRESS' ? 'erp.locked.inProgress' : 'erp.locked.noPermission');
  }

  _connection(document: DocumentEntity | undefined): Array<{ label: string; value: string }> {
    const properties = document?.properties ?? {};
    return HTTP_CONTENT_PROPERTIES.map((key) => ({
      label: this.i18n(labelKey(key)),
      value: this._text(properties[key]),
    }));
  }

  _display(field: FieldView): string {
    return this._text(field.toggle ? field.value === true : field.value);
  }

  /**
   * A value as text: yes or no for a boolean, a dash for nothing, a date or time as Web UI shows
   * them (nuxeo-format-behavior: the user's language, the browser's time zone).
   */
  _text(value: unknown): string {
    if (typeof value === 'boolean') return this.i18n(value ? 'erp.yes' : 'erp.no');
    if (isEmpty(value)) return '–';
    const kind = dateKind(value);
    if (kind === 'dateTime') return this.formatDateTime(value);
    return kind === 'date' ? this.formatDate(value) : String(value);
  }

  _editable(editable: boolean, kind: boolean): boolean {
    return editable && kind;
  }

  _missingClass(missing: boolean): string {
    return missing ? 'missing' : '';
  }

  _canSave(document: DocumentEntity | undefined, values: Record<string, unknown>, saving: boolean): boolean {
    return !saving && document !== undefined && Object.keys(changedValues(document.properties, values)).length > 0;
  }

  _typed(event: CustomEvent<{ value: unknown }>): void {
    this._edit(event, event.detail.value);
  }

  _toggled(event: CustomEvent<{ value: unknown }>): void {
    this._edit(event, event.detail.value === true);
  }

  _chosen(event: CustomEvent<{ value: unknown }>): void {
    this._edit(event, event.detail.value ?? null);
  }

  /** A value the user changed; the form is rebuilt only when it differs, so typing keeps its caret. */
  _edit(event: Event, value: unknown): void {
    const key = (event.currentTarget as HTMLElement).dataset.key as string;
    if (this.values[key] === value || (isEmpty(this.values[key]) && isEmpty(value))) return;
    this.values = { ...this.values, [key]: value };
  }

  /** Saves what changed, as Web UI's edit form does, then tells the page to read the document again. */
  async _save(): Promise<void> {
    if (this.document === undefined || this.saving) return;
    const request = this.$.doc as NuxeoDocumentElement;
    // With the change token the tab was shown with: a save over a change made meanwhile (the job
    // claiming the document to send it) is a 409, not a silent overwrite.
    request.data = {
      'entity-type': 'document',
      uid: this.document.uid,
      changeToken: this.document.changeToken,
      properties: changedValues(this.document.properties, this.values),
    };
    this.error = '';
    this.saving = true;
    try {
      const saved = (await request.put()) as DocumentEntity;
      // The answer has no enrichers: the page's document keeps them, with the saved values.
      this.document = { ...this.document, properties: saved.properties, changeToken: saved.changeToken };
      this.dispatchEvent(new CustomEvent('document-updated', { bubbles: true, composed: true }));
    } catch (error) {
      const { status, message } = error as { status?: number; message?: string };
      this.error =
        status === 409 ? this.i18n('erp.saveConflict') : this.i18n('erp.saveFailed', message ?? String(error));
    } finally {
      this.saving = false;
    }
  }
}
