import {
  ALLOWED_ORIGINS,
  API_KEY_MODES,
  API_KEY_SCOPES,
  DomainError,
  MEMBER_ROLES,
  type DnsRecord,
} from '@sendline/domain';
import type { ApiKeySummary, DomainSummary, MemberSummary, OrganizationSummary } from '@sendline/infra';
import { Argument, Command, Option } from 'commander';
import type { AdminContext } from './context';
import { EXIT, OutcomeError, UsageError } from './errors';
import { fields, isoTime, shortTime, table } from './format';
import { replay, REPLAY_VIEWS, replayText, type ReplayCommandOptions, type ReplayViewName } from './replay';

/**
 * The console as a command line: `admin <group> <command> [options]`. Every command prints a table
 * by default and JSON with --json; organizations are named by id (--org <id>).
 */

export interface Output {
  write(text: string): void;
}

interface JsonOption {
  json?: boolean;
}
interface OrgOption extends JsonOption {
  org: string;
}

// ── JSON shapes (times as ISO 8601, UTC) ────────────────────────────────────

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

export function memberJson(member: MemberSummary) {
  return { email: member.email, role: member.role, addedAt: isoTime(member.addedAt) };
}

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

export function keyJson(key: ApiKeySummary) {
  return {
    id: key.id,
    name: key.name,
    mode: key.mode,
    scopes: key.scopes,
    prefix: key.prefix,
    issuedAt: isoTime(key.issuedAt),
    revokedAt: isoTime(key.revokedAt),
  };
}

// ── tables ───────────────────────────────────────────────────────────────────

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

function keysTable(keys: ApiKeySummary[]): string {
  if (keys.length === 0) return 'No API keys.';
  return table(
    ['id', 'name', 'mode', 'scopes', 'prefix', 'issued', 'revoked'],
    keys.map((k) => [
      k.id,
      k.name,
      k.mode,
      k.scopes.join(','),
      `${k.prefix}…`,
      shortTime(k.issuedAt),
      shortTime(k.revokedAt),
    ]),
  );
}

function membersTable(members: MemberSummary[]): string {
  if (members.length === 0) return 'No members.';
  return table(
    ['email', 'role', 'added'],
    members.map((m) => [m.email, m.role, shortTime(m.addedAt)]),
  );
}

// ── input parsing ────────────────────────────────────────────────────────────

/** `email:send,email:read` (commas or spaces), or `all`. Unknown scopes are left to the decider to refuse. */
export function parseScopes(value: string): string[] {
  const scopes = value
    .split(/[\s,]+/)
    .map((scope) => scope.trim())
    .filter(Boolean);
  if (scopes.length === 1 && scopes[0] === 'all') return [...API_KEY_SCOPES];
  return scopes;
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

// ── the program ──────────────────────────────────────────────────────────────

export function buildProgram(context: AdminContext, output: Output, errors: Output): Command {
  const print = (text: string) => output.write(text.endsWith('\n') ? text : `${text}\n`);
  const emit = (options: JsonOption, json: unknown, text: () => string) =>
    print(options.json ? JSON.stringify(json, null, 2) : text());

  const program = new Command('admin')
    .description(
      'The Sendline console: organizations, members, domains, API keys, allowance, suppressions, view replays.\n' +
        'Organizations are named by id (--org <id>). Every command prints a table, or JSON with --json.\n' +
        'Exit codes: 0 done, 1 refused (bad input or a rule), 2 a service failed or is unreachable,\n' +
        '3 a replayed view differs from the live one (not swapped).',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.write(text),
      writeErr: (text) => errors.write(text),
      outputError: (text, write) => write(`admin: ${text.trim().replace(/^error: /, '')} (see --help)\n`),
    })
    .showSuggestionAfterError(true);

  const leaf = (parent: Command, name: string, description: string) =>
    parent.command(name).description(description).option('--json', 'print JSON instead of a table');
  const orgOption = () => new Option('--org <id>', 'the organization id').makeOptionMandatory();

  // ── org ──
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
      emit(options, { ...organizationJson(created), adminEmail: created.adminEmail }, () =>
        [
          'Organization created.',
          fields([
            ['id', created.id],
            ['name', created.name],
            ['admin', created.adminEmail],
            ['created', shortTime(created.createdAt)],
          ]),
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

  // ── member ──
  const member = program.command('member').description("an organization's members");
  leaf(member, 'add', 'add a member')
    .addOption(orgOption())
    .requiredOption('--email <email>', "the member's email address")
    .addOption(new Option('--role <role>', 'the role').choices(MEMBER_ROLES).default('developer'))
    .action(async (options: OrgOption & { email: string; role: string }) => {
      const added = await context.accounts.addMember(options.org, options.email, options.role);
      emit(options, memberJson(added), () => `Member added.\n${membersTable([added])}`);
    });
  leaf(member, 'remove', 'remove a member (not the last admin)')
    .addOption(orgOption())
    .requiredOption('--email <email>', "the member's email address")
    .action(async (options: OrgOption & { email: string }) => {
      const removed = await context.accounts.removeMember(options.org, options.email);
      emit(
        options,
        { email: removed.email, removedAt: isoTime(removed.removedAt) },
        () => `Member ${removed.email} removed.`,
      );
    });
  leaf(member, 'list', 'list the members')
    .addOption(orgOption())
    .action(async (options: OrgOption) => {
      const members = await context.accounts.listMembers(options.org);
      emit(options, members.map(memberJson), () => membersTable(members));
    });

  // ── domain ──
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

  // ── key ──
  const key = program.command('key').description("an organization's API keys");
  leaf(key, 'create', 'issue an API key; the key is printed once and never stored')
    .addOption(orgOption())
    .requiredOption('--scopes <scopes>', `comma-separated: ${API_KEY_SCOPES.join(', ')}; or all`)
    .addOption(new Option('--mode <mode>', 'test keys send nothing').choices(API_KEY_MODES).makeOptionMandatory())
    .option('--name <name>', 'a name to recognise the key by (default: "<mode> key")')
    .action(async (options: OrgOption & { scopes: string; mode: string; name?: string }) => {
      const issued = await context.accounts.issueApiKey(options.org, {
        name: options.name ?? `${options.mode} key`,
        scopes: parseScopes(options.scopes),
        mode: options.mode,
      });
      emit(options, { ...keyJson(issued), key: issued.token }, () =>
        [
          'API key issued. Copy it now: it is shown only this once and cannot be recovered.',
          '',
          `  ${issued.token}`,
          '',
          fields([
            ['id', issued.id],
            ['name', issued.name],
            ['mode', issued.mode],
            ['scopes', issued.scopes.join(', ')],
            ['prefix', `${issued.prefix}…`],
            ['issued', shortTime(issued.issuedAt)],
          ]),
        ].join('\n'),
      );
    });
  leaf(key, 'revoke', 'revoke an API key (refused by the API at once)')
    .addOption(orgOption())
    .requiredOption('--key <id>', 'the key id (admin key list shows it)')
    .action(async (options: OrgOption & { key: string }) => {
      const revoked = await context.accounts.revokeApiKey(options.org, options.key);
      emit(options, keyJson(revoked), () => `API key ${revoked.id} (${revoked.prefix}…) revoked.`);
    });
  leaf(key, 'list', 'list the API keys (never the keys themselves)')
    .addOption(orgOption())
    .action(async (options: OrgOption) => {
      const keys = await context.accounts.listApiKeys(options.org);
      emit(options, keys.map(keyJson), () => keysTable(keys));
    });

  // ── allowance ──
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

  // ── suppression ──
  const suppression = program.command('suppression').description("an organization's suppression list");
  leaf(suppression, 'add', 'suppress an address (ManualSuppression): the API will not send to it')
    .addOption(orgOption())
    .requiredOption('--email <address>', 'the address to suppress')
    .addOption(
      new Option('--origin <origin>', 'who asked for it').choices(ALLOWED_ORIGINS.ManualSuppression).default('Admin'),
    )
    .action(async (options: OrgOption & { email: string; origin: string }) => {
      const result = await context.accounts.addSuppression(options.org, options.email, options.origin);
      emit(options, { ...result, createdAt: isoTime(result.createdAt) }, () =>
        result.added
          ? `${result.emailAddress} suppressed (${result.reason}, origin ${result.origin}).`
          : `${result.emailAddress} was already suppressed (${result.reason}, origin ${result.origin}, since ${shortTime(result.createdAt)}).`,
      );
    });

  // ── replay ──
  program
    .command('replay')
    .description(
      'rebuild a view from its Kafka topics into a fresh copy, compare it with the live view (count and checksum\n' +
        'per organization) and swap it in only when they agree; otherwise report the differences (exit 3)',
    )
    .addArgument(new Argument('<view>', 'the view to rebuild').choices(REPLAY_VIEWS))
    .option('--dry-run', 'build and compare only; never swap')
    .option('--force', 'swap the rebuilt view in even when it differs (after reading the differences)')
    .option('--keep-rebuilt', 'keep the rebuilt copy when it is not swapped in')
    .option('--no-progress', 'no progress bar on stderr')
    .option('--json', 'print the report as JSON')
    .action(async (view: ReplayViewName, options: JsonOption & ReplayCommandOptions) => {
      const report = await replay(view, context, options);
      emit(options, report, () => replayText(report));
      if (!report.equal && !report.swapped) {
        throw new OutcomeError(
          `the rebuilt ${view} view differs from the live one in ${report.differenceCount} organizations; the live view was left as it was`,
          EXIT.differs,
        );
      }
    });

  return program;
}
