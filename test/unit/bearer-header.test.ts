/**
 * The Authorization header parser, against the edge firewall's key: the WAF rate-limits each caller
 * by the header with COMPRESS_WHITE_SPACE then LOWERCASE (lib/edge-firewall.ts), so every
 * spelling of one token the parser accepts must be one key there, or a caller could multiply its
 * limit by respelling its header.
 */
import { expect, test } from 'vitest';
import { bearerToken } from '#functions/core/auth/tokens.ts';

const token = 'ten_1.7-42.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfG.ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210_-ZyXwVuT';

/** The spellings of the scheme the tests try: its letter cases. */
const schemeSpellings = ['Bearer', 'bearer', 'BEARER', 'bEARER', 'BeArEr', 'bearER'];
/** Every accepted spelling of `token`'s header, from the one list of schemes, with 1 to 3 spaces. */
const acceptedSpellings = schemeSpellings.flatMap((scheme) =>
  [1, 2, 3].map((spaces) => `${scheme}${' '.repeat(spaces)}${token}`),
);

/** AWS WAF's COMPRESS_WHITE_SPACE: \f \t \n \r \v and NBSP become spaces, then runs of spaces one space (no trim). */
const compressWhiteSpace = (text: string) => text.replace(/[\f\t\n\r\v\u00a0]/g, ' ').replace(/ {2,}/g, ' ');
/** AWS WAF's LOWERCASE: A-Z to a-z. */
const lowercase = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
const wafKey = (header: string) => lowercase(compressWhiteSpace(header));

test('every accepted spelling is the same token to the parser, and one key to the WAF', () => {
  expect(acceptedSpellings).toHaveLength(schemeSpellings.length * 3);
  for (const header of acceptedSpellings) expect(bearerToken(header), header).toBe(token);
  expect(new Set(acceptedSpellings.map(wafKey))).toEqual(new Set([wafKey(`Bearer ${token}`)]));
});

test('tabs and whitespace at either end are refused: HTTP strips it before the field value, so it was added on purpose', () => {
  for (const header of [
    `Bearer\t${token}`,
    `Bearer \t${token}`,
    `Bearer\u00a0${token}`,
    ` Bearer ${token}`,
    `\tBearer ${token}`,
    `Bearer ${token} `,
    `Bearer ${token}\t`,
    `Bearer ${token}\n`,
    `Bearer\n ${token}`,
  ]) {
    expect(bearerToken(header), JSON.stringify(header)).toBeUndefined();
  }
});

test('other schemes, a missing space, an empty token and a token over 512 characters or with a space are refused', () => {
  for (const header of [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `Bearer${token}`,
    `Basic ${token}`,
    `Bearerx ${token}`,
    `Token ${token}`,
    `Bearer ${'a'.repeat(513)}`,
    `Bearer ${token} ${token}`,
    `Bearer ${token}é`,
    `Bеarer ${token}`, // A Cyrillic "е": only ASCII letters spell the scheme.
  ]) {
    expect(bearerToken(header), JSON.stringify(header)).toBeUndefined();
  }
  expect(bearerToken(`Bearer ${'a'.repeat(512)}`)).toBe('a'.repeat(512));
});
