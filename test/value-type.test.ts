import t from 'tap';
import { typedValue } from '../src/job/intake/value-type.js';

/** What a `$` reference may bring to a property of each type, and what is sent for it. */
t.test('a value found by a $ reference is read as its property type takes it, or refused', async (t) => {
  const cases: Array<[string, unknown, { value: unknown } | { problem: string }]> = [
    ['erpHttpContent:docId', 'abc', { value: 'abc' }],
    ['erpHttpContent:docId', 12, { value: '12' }],
    ['erpHttpContent:docId', ['a', 'b'], { problem: '["a","b"] is not text' }],
    ['erpHttpContent:scanPerformed', 'TRUE', { value: true }],
    ['erpHttpContent:scanPerformed', 'false', { value: false }],
    ['erpHttpContent:scanPerformed', false, { value: false }],
    ['erpHttpContent:scanPerformed', 'ja', { problem: '"ja" is not true or false' }],
    ['erpTaskStatus:attempts', '42', { value: 42 }],
    ['erpTaskStatus:attempts', 7, { value: 7 }],
    ['erpTaskStatus:attempts', 4.5, { problem: '4.5 is not a whole number' }],
    ['erpData:amount', '1234.50', { value: 1234.5 }],
    ['erpData:amount', 1234.5, { value: 1234.5 }],
    ['erpData:amount', '1.234,50', { problem: '"1.234,50" is not a number' }],
    ['erpData:documentDate', '2026-01-31', { value: '2026-01-31' }],
    ['erpData:readAt', '2026-01-31T09:30:00.000Z', { value: '2026-01-31T09:30:00.000Z' }],
    ['erpData:readAt', '2026-01-31T09:30:00+01:00', { value: '2026-01-31T09:30:00+01:00' }],
    ['erpData:documentDate', '31.01.2026', { problem: '"31.01.2026" is not a date (YYYY-MM-DD, or with a time)' }],
    ['erpData:documentDate', '2026-13-45', { problem: '"2026-13-45" is not a date (YYYY-MM-DD, or with a time)' }],
  ];
  for (const [key, found, expected] of cases)
    t.same(typedValue(key, found), expected, `${key} = ${JSON.stringify(found)}`);
});
