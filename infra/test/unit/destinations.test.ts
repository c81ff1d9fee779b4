import { describe, expect, it } from 'vitest';
import { checkDestination, classifyAddress, parseIPv6, type HostResolver } from '../../src/net';

/** Which addresses a webhook may reach, and where a URL leads, with a resolver that answers from a table. */

describe('address classes', () => {
  it.each([
    ['203.0.113.7', 'reserved'],
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['100.64.0.1', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['[::1]', 'loopback'],
    ['example.com', 'invalid'],
    ['1.2.3', 'invalid'],
    ['01.2.3.4', 'invalid'],
    ['1::2::3', 'invalid'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('reads IPv6 with an IPv4 tail and a compressed run', () => {
    expect(parseIPv6('::1.2.3.4')).toEqual([...Array(12).fill(0), 1, 2, 3, 4]);
    expect(parseIPv6('1:2:3:4:5:6:7:8')).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    expect(parseIPv6('1:2:3:4:5:6:7')).toBeNull();
  });
});

describe('where a URL leads', () => {
  const table: Record<string, string[]> = {
    'hooks.acme.example': ['93.184.216.34', '2606:4700:4700::1111'],
    'sneaky.acme.example': ['93.184.216.34', '10.0.0.5'],
    'metadata.acme.example': ['169.254.169.254'],
  };
  const resolve: HostResolver = async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

  it('accepts a name whose every address is public, and gives the addresses to connect to', async () => {
    expect(await checkDestination('https://hooks.acme.example/pm', resolve)).toEqual({
      kind: 'public',
      host: 'hooks.acme.example',
      addresses: ['93.184.216.34', '2606:4700:4700::1111'],
    });
  });

  it('refuses a name with one private address among public ones', async () => {
    expect(await checkDestination('https://sneaky.acme.example/', resolve)).toMatchObject({
      kind: 'refused',
      address: '10.0.0.5',
      addressClass: 'private',
    });
  });

  it('refuses a name that resolves to the metadata service', async () => {
    expect(await checkDestination('https://metadata.acme.example/', resolve)).toMatchObject({
      kind: 'refused',
      addressClass: 'metadata',
    });
  });

  it.each([
    ['https://127.0.0.1/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://[::1]:8443/', 'loopback'],
    ['https://[::ffff:a9fe:a9fe]/', 'metadata'],
    ['https://localhost/', 'loopback'],
    ['https://api.localhost/', 'loopback'],
    ['https://192.168.0.10/', 'private'],
  ])('refuses %s without asking DNS (%s)', async (url, addressClass) => {
    const noDns: HostResolver = async () => {
      throw new Error('no lookup expected');
    };
    expect(await checkDestination(url, noDns)).toMatchObject({ kind: 'refused', addressClass });
  });

  it('says a name that does not resolve is unresolved (nothing to judge yet)', async () => {
    expect(await checkDestination('https://nowhere.acme.example/', resolve)).toMatchObject({ kind: 'unresolved' });
  });
});
