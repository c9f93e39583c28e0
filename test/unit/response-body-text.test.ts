import { expect, test } from 'vitest';
import { responseBodyText } from '#functions/core/alerts/deliverer.ts';
import { maxResponseBodyBytes } from '#functions/core/alerts/webhook-config.ts';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

test("a receiver's answer is kept as its text, every character that could break a log a space", () => {
  expect(responseBodyText(Buffer.from('{"ok":true}'))).toBe('{"ok":true}');
  expect(responseBodyText(Buffer.from(''))).toBe('');
  expect(responseBodyText(Buffer.from('a\r\nb\tc\u0000d\u001be\u007ff\u0085g\u2028h\u2029i\u202ej\u2066k'))).toBe(
    'a  b c d e f g h i j k',
  );
  expect(responseBodyText(Buffer.from('ünïcødé ✓ 😀'))).toBe('ünïcødé ✓ 😀');
});

test('bytes that are not UTF-8 are read leniently, as U+FFFD', () => {
  expect(responseBodyText(Buffer.from([0x61, 0xff, 0x62, 0xc3]))).toBe('a\ufffdb');
});

test('never more than 1,024 bytes, and never a character cut in two', () => {
  expect(responseBodyText(Buffer.from('x'.repeat(5000)))).toBe('x'.repeat(maxResponseBodyBytes));
  // 'é' is 2 bytes: 1023 bytes of 'x' then 'é' would cut it; it is dropped.
  expect(responseBodyText(Buffer.from(`${'x'.repeat(1023)}é`))).toBe('x'.repeat(1023));
  // 1,024 bytes that are not UTF-8 become 3-byte U+FFFDs: still 1,024 bytes at most.
  const replaced = responseBodyText(Buffer.alloc(4096, 0xff));
  expect(bytesOf(replaced)).toBeLessThanOrEqual(maxResponseBodyBytes);
  expect(replaced).toBe('\ufffd'.repeat(Math.floor(maxResponseBodyBytes / 3)));
  for (const text of ['😀'.repeat(600), `a${'€'.repeat(600)}`, `ab${'€'.repeat(600)}`]) {
    const kept = responseBodyText(Buffer.from(text));
    expect(bytesOf(kept)).toBeLessThanOrEqual(maxResponseBodyBytes);
    expect(text.startsWith(kept)).toBe(true);
    expect(bytesOf(kept)).toBeGreaterThan(maxResponseBodyBytes - 4);
  }
});
