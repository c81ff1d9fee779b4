import { describe, expect, it } from 'vitest';
import { ConnectionsPerAddress } from '../../src/connections';

describe('connections per client address', () => {
  it('admits up to the limit from one address, and others beside it', () => {
    const open = new ConnectionsPerAddress(2);
    expect(open.admit('192.0.2.1', 's1')).toBe(true);
    expect(open.admit('192.0.2.1', 's2')).toBe(true);
    expect(open.admit('192.0.2.1', 's3')).toBe(false);
    expect(open.admit('192.0.2.2', 's4')).toBe(true);
  });

  it('admits again once one has closed; a session released twice or never admitted changes nothing', () => {
    const open = new ConnectionsPerAddress(1);
    open.admit('192.0.2.1', 's1');
    open.release('192.0.2.1', 's2');
    expect(open.admit('192.0.2.1', 's3')).toBe(false);
    open.release('192.0.2.1', 's1');
    open.release('192.0.2.1', 's1');
    expect(open.count('192.0.2.1')).toBe(0);
    expect(open.admit('192.0.2.1', 's4')).toBe(true);
  });
});
