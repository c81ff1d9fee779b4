/**
 * `tsx apps/admin/src/demo.ts --credentials .local/credentials.json` (run by `npm start`): makes the
 * demo organization once, or keeps the one whose credentials still authenticate. See demoSetup.ts.
 */
import { Command, CommanderError } from 'commander';
import { loadLocalServicesEnv } from '@sendline/infra';
import { DEMO_ADMIN_EMAIL, ensureDemo } from './demoSetup';
import { describeFailure } from './errors';

loadLocalServicesEnv();

const say = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} demo: ${line}\n`);

const program = new Command('demo')
  .description('create (once) the demo organization, its verified domain and keys, and write its credentials')
  .requiredOption('--credentials <file>', 'where the credentials JSON is kept (mode 0600)')
  .option('--zone <file>', 'the development DNS zone file (default: SENDLINE_DEV_DNS_ZONE or .local/dns-zone.json)')
  .exitOverride();

let exitCode = 0;
try {
  program.parse(process.argv);
  const options = program.opts<{ credentials: string; zone?: string }>();
  const { credentials, created, adminSignInLink } = await ensureDemo({
    credentialsFile: options.credentials,
    ...(options.zone ? { zoneFile: options.zone } : {}),
    log: say,
  });
  say(
    `${created ? 'created' : 'kept'} organization ${credentials.organizationId}, domain ${credentials.domain} (verified); ` +
      `API ${credentials.baseUrl}; MX ${credentials.mx}; keys in ${options.credentials}`,
  );
  say(`console: sign in as ${DEMO_ADMIN_EMAIL} with ${adminSignInLink} (works once, for 15 minutes)`);
} catch (error) {
  if (error instanceof CommanderError) {
    exitCode = error.exitCode;
  } else {
    say(`failed: ${describeFailure(error).message}`);
    exitCode = describeFailure(error).exitCode;
  }
}
process.exitCode = exitCode;
setTimeout(() => process.exit(exitCode), 2000).unref();
