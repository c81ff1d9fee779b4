import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { ROLES, type Me, type MemberSummary, type Role } from '../api/types';
import { ConfirmButton, ErrorNotice, Show, Time, useLoad, useAction } from '../components/common';

const ROLE_HELP: Record<Role, string> = {
  admin: 'everything, members and domains included',
  developer: 'keys, suppressions, activity',
  viewer: 'reads only',
};

/** The organization's members: invite one by email with a role, change a role, remove one. */
export function MembersPage({ me }: { me: Me }) {
  const members = useLoad(() => api.members(), []);
  const canWrite = me.can.manageMembers;
  return (
    <>
      <h1>Members</h1>
      {canWrite ? <Invite onInvited={members.reload} /> : null}
      <Show loaded={members} what="members">
        {(data) => (
          <div className="table-scroll card flush">
            <table>
              <thead>
                <tr>
                  <th scope="col">Email address</th>
                  <th scope="col">Role</th>
                  <th scope="col">Member since</th>
                  {canWrite ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {data.members.map((member) => (
                  <MemberRow
                    key={member.email}
                    member={member}
                    self={member.email === me.email}
                    canWrite={canWrite}
                    onChanged={members.reload}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Show>
    </>
  );
}

function MemberRow({
  member,
  self,
  canWrite,
  onChanged,
}: {
  member: MemberSummary;
  self: boolean;
  canWrite: boolean;
  onChanged: () => void;
}) {
  const { busy, error, run } = useAction();
  const changeRole = async (role: Role) => {
    await run(async () => {
      await api.changeRole(member.email, role);
      onChanged();
    });
  };
  return (
    <tr>
      <td>
        {member.email} {self ? <span className="muted">(you)</span> : null}
      </td>
      <td>
        {canWrite ? (
          <>
            <select
              aria-label={`Role of ${member.email}`}
              value={member.role}
              disabled={busy}
              onChange={(event) => changeRole(event.target.value as Role)}
            >
              {ROLES.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
            <ErrorNotice error={error} />
          </>
        ) : (
          <span className="badge">{member.role}</span>
        )}
      </td>
      <td>
        <Time at={member.addedAt} />
      </td>
      {canWrite ? (
        <td>
          <ConfirmButton
            label="Remove"
            accessibleLabel={`Remove the member ${member.email}`}
            question={`Remove ${member.email} from the organization? Their session ends at their next request.`}
            confirmLabel="Remove the member"
            action={async () => {
              await api.removeMember(member.email);
              onChanged();
            }}
          />
        </td>
      ) : null}
    </tr>
  );
}

function Invite({ onInvited }: { onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const { busy, error, run } = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setNotice(null);
    await run(async () => {
      const member = await api.inviteMember(email.trim(), role);
      setNotice(`${member.email} is a ${member.role} now; a sign-in link is on its way to them.`);
      setEmail('');
      onInvited();
    });
  };
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Invite a member">
      <div className="field grow">
        <label htmlFor="invite-email">Invite by email</label>
        <input
          id="invite-email"
          type="email"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          placeholder="colleague@example.com"
        />
      </div>
      <div className="field">
        <label htmlFor="invite-role">Role</label>
        <select id="invite-role" value={role} onChange={(event) => setRole(event.target.value as Role)}>
          {ROLES.map((option) => (
            <option key={option} value={option}>
              {option}: {ROLE_HELP[option]}
            </option>
          ))}
        </select>
      </div>
      <div className="field actions">
        <button type="submit" className="primary" disabled={busy}>
          Invite
        </button>
      </div>
      <ErrorNotice error={error} title="Not invited" />
      {notice ? (
        <p className="notice success" role="status">
          {notice}
        </p>
      ) : null}
    </form>
  );
}
