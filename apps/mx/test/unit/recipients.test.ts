import { describe, expect, it } from 'vitest';
import { recipientVerdict, type ReturnPathHosts } from '../../src/recipients';

const returnPath = { domain: 'bounces.sendline.dev', label: 'bounces' };
const token = 'b.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

/** The sending domains of some organizations; remembers which domains it was asked about. */
function domains(...names: string[]): ReturnPathHosts & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    isReturnPathHost: async (domain) => {
      asked.push(domain);
      return names.includes(domain);
    },
  };
}

const verdict = (address: string, sending: ReturnPathHosts = domains('bounces.shop.example')) =>
  recipientVerdict(address, returnPath, sending);

describe('the recipient policy: return paths only, never a relay', () => {
  describe('at the service’s own return-path domain', () => {
    it('takes b.<token>', async () => {
      expect(await verdict(`${token}@bounces.sendline.dev`)).toEqual({ accepted: true, kind: 'returnPath' });
    });

    it('takes a forged or damaged token: only the shape is checked here', async () => {
      expect((await verdict('b.not-a-token@bounces.sendline.dev')).accepted).toBe(true);
    });

    it('takes any case of the domain and of the b.', async () => {
      expect((await verdict(`B.ABC@Bounces.SendLine.DEV`)).accepted).toBe(true);
    });

    it('does not need the sending domains', async () => {
      const sending = domains();
      await verdict(`${token}@bounces.sendline.dev`, sending);
      expect(sending.asked).toEqual([]);
    });

    it('refuses postmaster, and any other local part, as a mailbox we do not have', async () => {
      for (const local of ['postmaster', 'abuse', 'b', 'b.', 'bx.abc', 'hello.b.abc']) {
        expect(await verdict(`${local}@bounces.sendline.dev`)).toEqual({
          accepted: false,
          code: 550,
          message: `5.1.1 <${local}@bounces.sendline.dev>: no such mailbox`,
        });
      }
    });
  });

  describe('at a sending domain’s return-path host', () => {
    it('takes b.<token> when the domain is some organization’s return-path host', async () => {
      const sending = domains('bounces.shop.example');
      expect((await verdict(`${token}@bounces.shop.example`, sending)).accepted).toBe(true);
      expect(sending.asked).toEqual(['bounces.shop.example']);
    });

    it('refuses it when no organization sends from the domain: relaying', async () => {
      expect(await verdict(`${token}@bounces.other.example`)).toEqual({
        accepted: false,
        code: 550,
        message: `5.7.1 <${token}@bounces.other.example>: relaying denied`,
      });
    });

    it('refuses another label before a sending domain, and the sending domain itself', async () => {
      expect((await verdict(`${token}@returns.shop.example`)).accepted).toBe(false);
      expect((await verdict(`${token}@shop.example`)).accepted).toBe(false);
      expect((await verdict(`${token}@bounces.`)).accepted).toBe(false);
    });

    it('refuses a local part without the b. shape', async () => {
      expect(await verdict('postmaster@bounces.shop.example')).toMatchObject({ accepted: false, code: 550 });
    });
  });

  describe('anywhere else', () => {
    it('refuses every address at an outside domain with 550 5.7.1: not a relay', async () => {
      for (const address of [`${token}@gmail.com`, 'someone@example.org', `${token}@sendline.dev`]) {
        expect(await verdict(address)).toMatchObject({
          accepted: false,
          code: 550,
          message: expect.stringMatching(/^5\.7\.1 /),
        });
      }
    });

    it('refuses an address without a domain', async () => {
      expect(await verdict('b.abc')).toMatchObject({ accepted: false, code: 550 });
    });
  });

  it('lets a failure to read the sending domains through (the server answers 451)', async () => {
    const failing: ReturnPathHosts = { isReturnPathHost: () => Promise.reject(new Error('Redis is away')) };
    await expect(verdict(`${token}@bounces.shop.example`, failing)).rejects.toThrow('Redis is away');
  });
});

describe('at an organization’s own inbound domain', () => {
  const inbound = {
    domain: 'inbound.sendline.dev',
    addresses: { organizationOf: async () => null },
    // reply.acme.example is verified; reply.new.example is claimed but not verified (the view answers null).
    domains: { organizationOfDomain: async (domain: string) => (domain === 'reply.acme.example' ? 'org-1' : null) },
  };
  const own = (address: string) => recipientVerdict(address, returnPath, domains('bounces.shop.example'), inbound);

  it('takes any local part of a verified domain, as inbound mail', async () => {
    expect(await own('orders+4711@Reply.Acme.Example')).toEqual({ accepted: true, kind: 'inbound' });
    expect(await own('postmaster@reply.acme.example')).toEqual({ accepted: true, kind: 'inbound' });
  });

  it('refuses an unverified or unknown domain, and a subdomain, as relaying', async () => {
    for (const address of ['a@reply.new.example', 'a@sub.reply.acme.example', 'a@elsewhere.example']) {
      expect(await own(address)).toMatchObject({
        accepted: false,
        code: 550,
        message: expect.stringMatching(/^5\.7\.1 /),
      });
    }
  });

  it('leaves return paths as they are', async () => {
    expect(await own(`${token}@bounces.shop.example`)).toEqual({ accepted: true, kind: 'returnPath' });
  });
});
