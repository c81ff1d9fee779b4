import { connectApiDependencies } from '@sendline/api';
import { ensureTestSystemOrganization, noHostResolver } from './api';
import { addresses } from './services';

/**
 * Runs once before the integration files (vitest's globalSetup). The system organization (its fixed id and domain,
 * system.sendline.test) is shared by every file that sends system mail, and each file that needs it sets it up
 * (ensureTestSystemOrganization). On a Redis whose accounts view does not show it yet (a fresh machine's, and the
 * Redis Cluster `npm test` starts fresh for this suite), files doing so side by side each added its domain with a
 * DKIM key of its own, and a sender signing with one key was checked against another ("dkim: fail"), or a sign-in
 * link never came. Set up here first, every file finds it set up and verified, and changes nothing.
 */
export default async function setup(): Promise<void> {
  // As startTestApi connects the API's.
  const connected = connectApiDependencies(addresses, {
    clientId: 'test-setup',
    mailHost: 'mail.sendline.test',
    development: false,
    resolveHost: noHostResolver,
  });
  try {
    await ensureTestSystemOrganization(connected.deps);
  } finally {
    await connected.disconnect();
  }
}
