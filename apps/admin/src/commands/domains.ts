import { DomainError, type DnsRecord } from '@sendline/domain';
import type { DomainSummary } from '@sendline/application';
import { Option, type Command } from 'commander';
import { UsageError } from '../errors';
import { isoTime, shortTime, table } from '../format';
import { orgOption, type CommandKit, type JsonOption, type OrgOption } from './kit';

/**
 * `admin domain add|verify|verify-return-path|assign-return-path|remove|list`: an organization's sending domains, the
 * DNS records to publish (and to remove) and their checks.
 */

export function domainJson(domain: DomainSummary) {
  return {
    name: domain.name,
    verified: domain.verified,
    verifiedAt: isoTime(domain.verifiedAt),
    addedAt: isoTime(domain.addedAt),
    dkimSelector: domain.dkimSelector,
    returnPath: domain.returnPath && { ...domain.returnPath, verifiedAt: isoTime(domain.returnPath.verifiedAt) },
    dnsRecords: domain.dnsRecords,
    dnsRecordsToRemove: domain.dnsRecordsToRemove,
  };
}

/** The records to publish, and those to remove when there are any. */
function recordsText(domain: DomainSummary): string {
  const remove = domain.dnsRecordsToRemove;
  return [
    recordsTable(domain.dnsRecords),
    ...(remove.length > 0
      ? [
          '',
          'Remove this record, which earlier instructions asked for (keep your own MX records):',
          recordsTable(remove),
        ]
      : []),
  ].join('\n');
}

function returnPathCell(domain: DomainSummary): string {
  if (!domain.returnPath) return 'none yet';
  return `${domain.returnPath.host} (${domain.returnPath.verified ? 'verified' : 'not verified'})`;
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
    ['domain', 'verified', 'verified at', 'added', 'dkim selector', 'return path'],
    domains.map((d) => [
      d.name,
      d.verified ? 'yes' : 'no',
      shortTime(d.verifiedAt),
      shortTime(d.addedAt),
      d.dkimSelector,
      returnPathCell(d),
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
          `     and: admin domain verify-return-path --org ${options.org} --domain ${added.name}`,
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
  leaf(
    domain,
    'verify-return-path',
    "check the return path's MX and SPF records in DNS: once verified, its mail's envelope sender is under it",
  )
    .addOption(orgOption())
    .requiredOption('--domain <name>', 'the domain')
    .action(async (options: OrgOption & { domain: string }) => {
      const result = await context.accounts.verifyReturnPath(options.org, options.domain);
      const host = result.domain.returnPath?.host;
      emit(
        options,
        { ...domainJson(result.domain), alreadyVerified: result.alreadyVerified, found: result.found },
        () =>
          result.alreadyVerified
            ? `The return path ${host} of ${result.domain.name} was already verified (${shortTime(result.domain.returnPath?.verifiedAt)}).`
            : `The return path ${host} of ${result.domain.name} is verified: its mail is sent with envelope senders at ${host}.`,
      );
    });
  leaf(
    domain,
    'assign-return-path',
    'give a domain added before return paths its return path (SENDLINE_RETURN_PATH_LABEL), or every such domain',
  )
    .addOption(new Option('--org <id>', 'the organization id (with --domain)'))
    .option('--domain <name>', 'the domain')
    .option('--all', 'every domain of every organization that has no return path yet')
    .action(async (options: JsonOption & { org?: string; domain?: string; all?: boolean }) => {
      const targets: { org: string; domain: string }[] = [];
      if (options.all) {
        if (options.org || options.domain) throw new UsageError('give either --all, or --org and --domain');
        for (const organization of await context.accounts.listOrganizations()) {
          for (const d of await context.accounts.listDomains(organization.id)) {
            if (!d.returnPath) targets.push({ org: organization.id, domain: d.name });
          }
        }
      } else {
        if (!options.org || !options.domain) throw new UsageError('give --org and --domain, or --all');
        targets.push({ org: options.org, domain: options.domain });
      }
      const results: { organizationId: string; assigned: boolean; domain: DomainSummary }[] = [];
      for (const target of targets) {
        const { domain: summary, assigned } = await context.accounts.assignReturnPath(target.org, target.domain);
        results.push({ organizationId: target.org, assigned, domain: summary });
      }
      emit(
        options,
        results.map((r) => ({ organizationId: r.organizationId, assigned: r.assigned, ...domainJson(r.domain) })),
        () =>
          results.length === 0
            ? 'Every domain has a return path.'
            : results
                .map(({ organizationId, assigned, domain: d }) =>
                  [
                    assigned
                      ? `Domain ${d.name} (organization ${organizationId}) has the return path ${d.returnPath?.host}. Publish:`
                      : `Domain ${d.name} already had the return path ${d.returnPath?.host}. Its records:`,
                    '',
                    recordsText(d),
                    '',
                    `Then run: admin domain verify-return-path --org ${organizationId} --domain ${d.name}`,
                  ].join('\n'),
                )
                .join('\n\n'),
      );
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
        [domainsTable(domains), ...domains.map((d) => `\n${d.name}:\n${recordsText(d)}`)].join('\n'),
      );
    });
}
