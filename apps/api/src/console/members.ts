import { Type } from 'typebox';
import type { Api, ConsoleServices } from '../context';
import { memberAllowedTo, memberOf } from './session';

/**
 * The Members page: the organization's members through the account use cases (`admin member …`); an invitation is
 * AddMember and a sign-in link sent to the new member at once. The domain keeps the last admin: neither removed
 * nor demoted (409). Every role reads; an admin changes.
 */
export function membersPage(services: ConsoleServices) {
  const { accounts, signIn } = services;
  const Email = Type.String({ maxLength: 320 });
  const Role = Type.String({ maxLength: 20 });
  return async function (api: Api): Promise<void> {
    api.get('/members', async (request) => ({
      members: await accounts.listMembers(memberOf(request).organization.id),
    }));

    api.post('/members', { schema: { body: Type.Object({ email: Email, role: Role }) } }, async (request) => {
      const member = memberAllowedTo(request, 'manageMembers', 'invite members');
      const added = await accounts
        .as(member.email)
        .addMember(member.organization.id, request.body.email, request.body.role);
      await signIn.sendLink(member.organization.id, added.email, member.email);
      return added;
    });

    api.put(
      '/members/:email',
      { schema: { params: Type.Object({ email: Email }), body: Type.Object({ role: Role }) } },
      async (request) => {
        const member = memberAllowedTo(request, 'manageMembers', 'change roles');
        return accounts
          .as(member.email)
          .changeMemberRole(member.organization.id, request.params.email, request.body.role);
      },
    );

    api.delete('/members/:email', { schema: { params: Type.Object({ email: Email }) } }, async (request, reply) => {
      const member = memberAllowedTo(request, 'manageMembers', 'remove members');
      await accounts.as(member.email).removeMember(member.organization.id, request.params.email);
      return reply.code(204).send();
    });
  };
}
