/**
 * The development DNS server: answers TXT and MX queries on loopback from the zone file
 * (.local/dns-zone.json), re-read as soon as it changes. `npm start` runs it; the demo publishes
 * its domain's records in the zone file (the ownership TXT, the return path's MX and SPF at
 * bounces.demo.sendline.test, DKIM, DMARC) and verifies the domain and its return path against it.
 * Point the console's lookups at it with SENDLINE_DNS_SERVERS=127.0.0.1:5353.
 *
 * Settings: SENDLINE_DEV_DNS_HOST (127.0.0.1), SENDLINE_DEV_DNS_PORT (5353), SENDLINE_DEV_DNS_ZONE.
 */
import { devDnsSettings, startDnsServer, zoneFileSource } from '@sendline/infra';

const settings = devDnsSettings();
const log = (fields: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), logger: 'dev-dns-server', ...fields })}\n`);

const server = await startDnsServer({
  zone: zoneFileSource(settings.zoneFile),
  host: settings.host,
  port: settings.port,
  onQuery: (query) => log({ msg: 'query', ...query }),
  onError: (error) => log({ level: 'error', msg: error instanceof Error ? error.message : String(error) }),
});
log({ msg: 'listening', address: server.address, zoneFile: settings.zoneFile });

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  log({ msg: 'stopping', signal });
  await server.close();
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
