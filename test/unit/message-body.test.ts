import fc from 'fast-check';
import { expect, test } from 'vitest';
import { messageBody } from '#functions/core/store/queues.ts';
import { anyText } from '#test/support/any-text.ts';

test('a queue message body is ASCII only and parses back to the very same value', () => {
  const value = { name: '🚨 Vendas do mês', text: 'naïve 東京 \uffff \ufffe \u2028', control: '\u0001\u007f' };
  const body = messageBody(value);
  expect(body).toMatch(/^[\x20-\x7e]*$/);
  expect(JSON.parse(body)).toEqual(value);
  fc.assert(
    fc.property(fc.jsonValue(), anyText(), (json, text) => {
      const sent = messageBody({ json, text });
      expect(sent).toMatch(/^[\x20-\x7e]*$/);
      expect(JSON.parse(sent)).toEqual(JSON.parse(JSON.stringify({ json, text })));
    }),
  );
});
