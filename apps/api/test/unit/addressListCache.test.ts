import { parseAddressList } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { parseAddressListCached } from '../../src/addressListCache';

describe('the API’s address list cache', () => {
  it.each(['Alice <alice@customer.example>, bob@customer.example', 'not an address', '"Doe, John" <j@x.example>'])(
    'answers %j exactly as parseAddressList, the first time and the next',
    (input) => {
      expect(parseAddressListCached(input)).toEqual(parseAddressList(input));
      expect(parseAddressListCached(input)).toEqual(parseAddressList(input));
    },
  );

  it('hands out copies: changing one answer does not change the next', () => {
    const first = parseAddressListCached('Alice <alice@customer.example>');
    if (!first.ok) throw new Error('expected the address to be accepted');
    first.value[0]!.email = 'changed@elsewhere.example';
    first.value.push({ email: 'extra@elsewhere.example' });
    expect(parseAddressListCached('Alice <alice@customer.example>')).toEqual({
      ok: true,
      value: [{ email: 'alice@customer.example', name: 'Alice' }],
    });
  });

  it('stays correct past its bound', () => {
    for (let i = 0; i < 2100; i++) expect(parseAddressListCached(`user${i}@customer.example`).ok).toBe(true);
    expect(parseAddressListCached('user1@customer.example')).toEqual({
      ok: true,
      value: [{ email: 'user1@customer.example' }],
    });
  });
});
