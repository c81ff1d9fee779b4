import { DomainError, type DnsRecord } from '@sendline/domain';
import type { DomainSummary } from '@sendline/application';
import type { Command } from 'commander';
import { isoTime, shortTime, table } from '../format';
import { orgOption, type CommandKit, type OrgOption } from './kit';

/** `admin domain add|verify|remove|list`: an organization's sending domains and the DNS records to publish. */

export function domainJson(domain: DomainSummary) {
  return {
    name: domain.name,
    verified: domain.verified,
    verifiedAt: isoTime(domain.verifiedAt),
    addedAt: isoTime(domain.addedAt),
    dkimSelector: domain.dkimSelector,
    dnsRecords: domain.dnsRecords,
  };
}

function recordsTable(records: readonly DnsRecord[]): string {
  return table(
    ['purpose', 'type', 'name', 'priority', 'value'],
    records.map((r) => [r.purpose, r.type, r.name, r.priority === undefined ? '' : String(r.priority), r.value]),
  );
}

function domainsTable(domains: DomainSummary[]): string {
  if (domains.length === 0) return 'No domains.';
  return table(
    ['domain', 'verified', 'verified at', 'added', 'dkim selector'],
    domains.map((d) => [
      d.name,
      d.verified ? 'yes' : 'no',
      shortTime(d.verifiedAt),
      shortTime(d.addedAt),
      d.dkimSelector,
    ]),
  );
}

export function domainCommands(program: Command, { context, emit, leaf }: CommandKit): void {
  const domain = program.command('domain').description("an organization's sending domains");
  leaf(domain, 'add', 'add a sending domain: makes its DKIM key pair and prints the DNS records to publish')
    .addOption(orgOption())
    .requiredOption('--domain <name>', 'the domain, e.g. example.com')
    .action(async (options: OrgOption & { domain: string }) => {
      const added = await context.accounts.addDomain(options.org, options.domain);
      emit(options, domainJson(added), () =>
        [
          `Domain ${added.name} added (not verified yet). Publish these DNS records:`,
          '',
          recordsTable(added.dnsRecords),
          '',
          `Then run: admin domain verify --org ${options.org} --domain ${added.name}`,
        ].join('\n'),
      );
    });
  leaf(domain, 'verify', 'check the ownership TXT record in DNS and mark the domain verified')
    .addOption(orgOption())
    .requiredOption('--domain <name>', 'the domain')
    .action(async (options: OrgOption & { domain: string }) => {
      try {
        const result = await context.accounts.verifyDomain(options.org, options.domain);
        emit(options, { ...domainJson(result.domain), alreadyVerified: result.alreadyVerified }, () =>
          result.alreadyVerified
            ? `Domain ${result.domain.name} was already verified (${shortTime(result.domain.verifiedAt)}).`
            : `Domain ${result.domain.name} verified.`,
        );
      } catch (error) {
        if (error instanceof DomainError && error.code === 'DomainVerificationFailed') {
          // Say what to publish: the record the lookup did not find.
          const domains = await context.accounts.listDomains(options.org).catch(() => []);
          const expected = domains
            .find((d) => d.name === error.details?.domain)
            ?.dnsRecords.find((record) => record.purpose === 'ownership');
          if (expected) {
            throw new DomainError(
              error.code,
              `${error.message}; publish TXT ${expected.name} "${expected.value}" and run verify again`,
              error.details,
            );
          }
        }
        throw error;
      }
    });
  leaf(domain, 'remove', 'remove a domain (it can no longer send)')
    .addOption(orgOption())
    .requiredOption('--domain <name>', 'the domain')
    .action(async (options: OrgOption & { domain: string }) => {
      const removed = await context.accounts.removeDomain(options.org, options.domain);
      emit(
        options,
        { name: removed.name, removedAt: isoTime(removed.removedAt) },
        () => `Domain ${removed.name} removed.`,
      );
    });
  leaf(domain, 'list', 'list the domains with their state and DNS records')
    .addOption(orgOption())
    .action(async (options: OrgOption) => {
      const domains = await context.accounts.listDomains(options.org);
      emit(options, domains.map(domainJson), () =>
        [domainsTable(domains), ...domains.map((d) => `\n${d.name}:\n${recordsTable(d.dnsRecords)}`)].join('\n'),
      );
    });
}
