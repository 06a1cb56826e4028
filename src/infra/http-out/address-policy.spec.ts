import { classifyAddress, isLocalHostname, parseV6 } from './address-policy';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:7f00:1', 'IPv4-mapped'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['64:ff9b::10.0.0.1', 'NAT64'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:7f00:1::', '6to4'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['100::1', 'discard'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(classifyAddress(address)).toEqual(expect.stringContaining(reason));
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2a00:1450::1',
  ])('allows the public address %s', (address) => {
    expect(classifyAddress(address)).toBeNull();
  });

  it('refuses what is not an address', () => {
    expect(classifyAddress('example.com')).toBe('not an IP address');
    expect(classifyAddress('1.2.3.256')).toBe('not an IP address');
    expect(classifyAddress('1::2::3')).toBe('not an IP address');
  });

  it('parses IPv6 forms', () => {
    expect(parseV6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseV6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseV6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    expect(parseV6('2001:db8:0:0:1:0:0:1')).toEqual([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]);
    expect(parseV6('10.0.0.1')).toBeNull();
  });

  it('names localhost and *.localhost as local whatever DNS says', () => {
    expect(isLocalHostname('localhost')).toBe(true);
    expect(isLocalHostname('LOCALHOST.')).toBe(true);
    expect(isLocalHostname('api.localhost')).toBe(true);
    expect(isLocalHostname('localhost.example.com')).toBe(false);
  });
});
