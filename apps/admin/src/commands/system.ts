import { ensureSystemOrganization } from '@sendline/application';
import { publishToZoneFile } from '@sendline/infra';
import type { Command } from 'commander';
import { fields, table } from '../format';
import type { CommandKit, JsonOption } from './kit';

/**
 * `admin system setup`: the system organization that sends system mail (console sign-in links, notices) from
 * SENDLINE_SYSTEM_SENDER's domain. Idempotent: creates what is missing, verifies the domain when its records are
 * published (with --zone, it publishes them in that development DNS zone file first), and otherwise prints them.
 */
export function systemCommands(program: Command, { context, emit, leaf }: CommandKit): void {
  const system = program.command('system').description('the system organization that sends system mail');
  leaf(system, 'setup', 'create the system organization and its sender domain, and verify the domain (idempotent)')
    .option('--zone <file>', 'publish the records in this development DNS zone file before verifying')
    .action(async (options: JsonOption & { zone?: string }) => {
      const zone = options.zone;
      const status = await ensureSystemOrganization({
        accounts: context.accounts,
        view: context.accountsView,
        sender: context.systemSender,
        ...(zone ? { publish: (records) => publishToZoneFile(zone, records), verifyAttempts: 10 } : {}),
      });
      emit(options, { sender: context.systemSender, ...status }, () =>
        [
          status.verified
            ? `System mail is ready: ${context.systemSender} sends as organization ${status.organizationId}.`
            : `The system domain ${status.domain} is not verified yet: publish these records, then run this again.`,
          fields([
            ['organization', `${status.organizationId}${status.created.organization ? ' (created)' : ''}`],
            ['domain', `${status.domain}${status.created.domain ? ' (added)' : ''}`],
            ['verified', status.verified ? (status.created.verified ? 'yes (now)' : 'yes') : 'no'],
            ['return path verified', status.returnPathVerified ? 'yes' : 'no'],
          ]),
          ...(status.verified
            ? []
            : [
                table(
                  ['purpose', 'type', 'name', 'value'],
                  status.dnsRecords.map((r) => [r.purpose, r.type, r.name, r.value]),
                ),
              ]),
        ].join('\n'),
      );
    });
}
