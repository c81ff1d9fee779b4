import { MEMBER_ROLES } from '@sendline/domain';
import type { MemberSummary } from '@sendline/application';
import { Option, type Command } from 'commander';
import { isoTime, shortTime, table } from '../format';
import { orgOption, type CommandKit, type OrgOption } from './kit';

/** `admin member add|remove|list`: an organization's members and their roles. */

export function memberJson(member: MemberSummary) {
  return { email: member.email, role: member.role, addedAt: isoTime(member.addedAt) };
}

function membersTable(members: MemberSummary[]): string {
  if (members.length === 0) return 'No members.';
  return table(
    ['email', 'role', 'added'],
    members.map((m) => [m.email, m.role, shortTime(m.addedAt)]),
  );
}

export function memberCommands(program: Command, { context, emit, leaf }: CommandKit): void {
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
}
