import type { OrganizationSummary } from '@sendline/application';
import type { Command } from 'commander';
import { UsageError } from '../errors';
import { fields, isoTime, shortTime, table } from '../format';
import { orgOption, type CommandKit, type JsonOption, type OrgOption } from './kit';

/** `admin org create|list|show` and `admin allowance set`: the organizations and their sending allowance. */

export function organizationJson(organization: OrganizationSummary) {
  return {
    id: organization.id,
    name: organization.name,
    createdAt: isoTime(organization.createdAt),
    messagesPerMonth: organization.messagesPerMonth,
    members: organization.members,
    domains: organization.domains,
    activeKeys: organization.activeKeys,
  };
}

const allowanceText = (messagesPerMonth: number | null) =>
  messagesPerMonth === null ? 'unlimited' : `${messagesPerMonth} messages/month`;

function organizationsTable(organizations: OrganizationSummary[]): string {
  if (organizations.length === 0) return 'No organizations.';
  return table(
    ['id', 'name', 'created', 'allowance', 'members', 'domains', 'active keys'],
    organizations.map((o) => [
      o.id,
      o.name,
      shortTime(o.createdAt),
      allowanceText(o.messagesPerMonth),
      String(o.members),
      String(o.domains),
      String(o.activeKeys),
    ]),
  );
}

/** A whole number ≥ 0, or `unlimited` (null). */
export function parseAllowance(value: string): number | null {
  const text = value.trim().toLowerCase();
  if (text === 'unlimited') return null;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(
      `--messages-per-month takes a whole number of messages (0 or more) or unlimited, not ${JSON.stringify(value)}`,
    );
  }
  return Number(text);
}

export function organizationCommands(program: Command, { context, emit, leaf }: CommandKit): void {
  const org = program.command('org').description('organizations');
  leaf(org, 'create', 'create an organization with its first admin member')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--admin-email <email>', "the first admin's email address")
    .option('--id <id>', 'organization id (default: a new UUID)')
    .action(async (options: JsonOption & { name: string; adminEmail: string; id?: string }) => {
      const created = await context.accounts.createOrganization({
        name: options.name,
        adminEmail: options.adminEmail,
        ...(options.id === undefined ? {} : { id: options.id }),
      });
      const signIn = await context.signInLink(created.id, created.adminEmail);
      emit(options, { ...organizationJson(created), adminEmail: created.adminEmail, signInLink: signIn }, () =>
        [
          'Organization created.',
          fields([
            ['id', created.id],
            ['name', created.name],
            ['admin', created.adminEmail],
            ['created', shortTime(created.createdAt)],
          ]),
          '',
          `The admin's first console sign-in link (works once, for 15 minutes):`,
          `  ${signIn}`,
        ].join('\n'),
      );
    });
  leaf(org, 'list', 'list the organizations').action(async (options: JsonOption) => {
    const organizations = await context.accounts.listOrganizations();
    emit(options, organizations.map(organizationJson), () => organizationsTable(organizations));
  });
  leaf(org, 'show', 'show one organization')
    .addOption(orgOption())
    .action(async (options: OrgOption) => {
      const organization = await context.accounts.organization(options.org);
      emit(options, organizationJson(organization), () => organizationsTable([organization]));
    });

  const allowance = program.command('allowance').description("an organization's sending allowance");
  leaf(allowance, 'set', 'set how many messages the organization may send per calendar month (UTC)')
    .addOption(orgOption())
    .requiredOption('--messages-per-month <n>', 'a whole number (0 stops sending), or unlimited')
    .action(async (options: OrgOption & { messagesPerMonth: string }) => {
      const result = await context.accounts.setAllowance(options.org, parseAllowance(options.messagesPerMonth));
      emit(
        options,
        { organizationId: options.org, ...result },
        () => `Allowance ${result.changed ? 'set to' : 'was already'} ${allowanceText(result.messagesPerMonth)}.`,
      );
    });
}
