import t from 'tap';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { notInXml, parseAnswer, requestEnvelope, type RfcParams, type RfcStructure } from '../src/erp/soap.js';

/**
 * The SOAP-RFC request is written as text, not by a generic XML builder: what SAP's runtime reads
 * from it must be every parameter as it was meant, whatever a value holds (markup characters,
 * quotes, any script, line ends, nothing at all), and byte for byte what the generic builder wrote
 * before, but for a carriage return, now a character reference.
 */

const name = fc.stringMatching(/^(\/[A-Z]{1,4}\/)?[A-Z][A-Z0-9_]{0,11}$/);
// Any text XML 1.0 can carry (no C0 controls but tab, newline and carriage return).
const text = fc.string({
  unit: fc.constantFrom('a', 'Z', '0', ' ', '&', '<', '>', '"', "'", 'é', '中', '😀', '\t', '\n', '\r', ';'),
});
const row = fc.dictionary(name, text, { minKeys: 1, maxKeys: 4 });
const params = fc.dictionary(name, fc.oneof(text, row, fc.array(row, { maxLength: 3 })), { maxKeys: 6 });

const xmlName = (abap: string): string => abap.replace(/\//g, '_-');
const renamed = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [xmlName(k), v]));

/** The envelope as fast-xml-parser's builder wrote it (the program's way until it was written as text). */
function generic(functionName: string, values: RfcParams): string {
  const builder = new XMLBuilder({ ignoreAttributes: false, suppressEmptyNode: true });
  const element = (value: RfcParams[string]): unknown =>
    Array.isArray(value) ? { item: value.map(renamed) } : typeof value === 'string' ? value : renamed(value);
  const fields = Object.fromEntries(Object.entries(values).map(([k, v]) => [xmlName(k), element(v)]));
  return `<?xml version="1.0" encoding="utf-8"?>${builder.build({
    'soap-env:Envelope': {
      '@_xmlns:soap-env': 'http://schemas.xmlsoap.org/soap/envelope/',
      'soap-env:Body': {
        [`urn:${xmlName(functionName)}`]: { '@_xmlns:urn': 'urn:sap-com:document:sap:rfc:functions', ...fields },
      },
    },
  })}`;
}

/** What a reader of the request gets: each parameter, a table's rows as `item` elements. */
function read(xml: string, functionName: string): Record<string, unknown> {
  const parser = new XMLParser({
    ignoreAttributes: true,
    parseTagValue: false,
    trimValues: false,
    // Character references read as their characters, as any XML parser reads them (XML 1.0 §4.1).
    htmlEntities: true,
    isArray: (n) => n === 'item',
  });
  const tree = parser.parse(xml) as Record<string, Record<string, Record<string, unknown>>>;
  const body = tree['soap-env:Envelope']['soap-env:Body'][`urn:${xmlName(functionName)}`];
  return body === '' ? {} : (body as Record<string, unknown>);
}

const meant = (values: RfcParams): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(values).map(([k, v]) => [
      xmlName(k),
      Array.isArray(v)
        ? v.length === 0
          ? ''
          : { item: v.map((r: RfcStructure) => renamed(r)) }
        : typeof v === 'string'
          ? v
          : renamed(v),
    ]),
  );

t.test('every parameter reaches SAP as it was meant, and the request is what the generic builder wrote', async (t) => {
  t.doesNotThrow(
    () =>
      fc.assert(
        fc.property(name, params, (functionName, values) => {
          const xml = requestEnvelope(functionName, values);
          // The builder wrote a carriage return raw, which a parser reads as a line feed (XML 1.0 §2.11).
          assert.equal(xml, generic(functionName, values).replaceAll('\r', '&#13;'));
          assert.deepEqual(read(xml, functionName), meant(values));
        }),
        { numRuns: 300 },
      ),
    '300 generated calls',
  );
  t.equal(
    requestEnvelope('RFC_PING', {}),
    '<?xml version="1.0" encoding="utf-8"?><soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body><urn:RFC_PING xmlns:urn="urn:sap-com:document:sap:rfc:functions"/></soap-env:Body></soap-env:Envelope>',
    'no parameters: an empty element',
  );
});

t.test("an answer's character references are read as their characters", async (t) => {
  const answer =
    '<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body>' +
    '<urn:BAPI_X.Response xmlns:urn="urn:sap-com:document:sap:rfc:functions"><RETURN><MESSAGE>line&#xD;&#10;two &amp; &#x41;</MESSAGE></RETURN></urn:BAPI_X.Response>' +
    '</soap-env:Body></soap-env:Envelope>';
  t.same(parseAnswer('BAPI_X', answer), { kind: 'response', values: { RETURN: { MESSAGE: 'line\r\ntwo & A' } } });
});

t.test("an answer is read with XML's references and no others", async (t) => {
  const answer = (message: string, doctype = ''): string =>
    `<?xml version="1.0"?>${doctype}<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body>` +
    `<urn:BAPI_X.Response xmlns:urn="urn:sap-com:document:sap:rfc:functions"><MESSAGE>${message}</MESSAGE></urn:BAPI_X.Response>` +
    '</soap-env:Body></soap-env:Envelope>';
  const message = (xml: string): unknown => {
    const read = parseAnswer('BAPI_X', xml);
    return read.kind === 'response' ? read.values.MESSAGE : read.kind;
  };
  t.equal(
    message(answer('&lt;&gt;&amp;&apos;&quot; &#x1F600;&#233;')),
    `<>&'" 😀é`,
    'the five entities and any character',
  );
  t.equal(message(answer('&amp;#13; &amp;lt;')), '&#13; &lt;', 'read once: an escaped reference is text');
  t.equal(message(answer('&nbsp;&copy;')), '&nbsp;&copy;', "HTML's entities are not XML's");
  t.equal(message(answer('&#0;&#x1;&#xFFFE;')), '&#0;&#x1;&#xFFFE;', 'a character XML cannot carry is not made one');
  t.equal(
    message(answer('&x;', '<!DOCTYPE e [<!ENTITY x "expanded">]>')),
    '&x;',
    "a DOCTYPE's entities are not expanded",
  );
  const sent = fc.string({ unit: fc.constantFrom('a', '&', '<', '>', '"', "'", '#', ';', 'x', '1', 'é', '😀', '\r') });
  t.doesNotThrow(
    () =>
      fc.assert(
        fc.property(sent, (value) => {
          // The way the request escapes a value is the way SAP's runtime escapes an answer's.
          const escaped = requestEnvelope('F', { V: value }).match(/<V>(.*)<\/V>|<V\/>/)?.[1] ?? '';
          assert.equal(message(answer(escaped)), value);
        }),
        { numRuns: 300 },
      ),
    'any text SAP answers comes back as it was',
  );
});

t.test('the characters a request cannot carry are named before it is written', async (t) => {
  t.same(
    ['a\tb\nc\rd é 中 😀', 'x\u0000', '\u000b', '\u001f', '\ufffe', 'a\ud800', '\udc00b'].map(notInXml),
    [undefined, 'U+0000', 'U+000B', 'U+001F', 'U+FFFE', 'U+D800', 'U+DC00'],
    'tab, line ends and any character of a script pass; controls, non-characters and lone surrogates do not',
  );
});
