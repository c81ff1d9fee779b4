import { describe, expect, it } from 'vitest';
import {
  API_KEY_SCOPES,
  CONSOLE_ACTIONS,
  permissionsOf,
  requireKeyIssuer,
  requireRole,
  roleMay,
} from '../../src/accounts';
import { DomainError } from '../../src/domainError';

function refusal(run: () => void): DomainError | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  return undefined;
}

describe('console roles', () => {
  it('gives an admin every action', () => {
    for (const action of CONSOLE_ACTIONS) expect(roleMay('admin', action), action).toBe(true);
  });

  it('lets a developer manage suppressions, keys and templates, and nothing of domains, members or the audit', () => {
    expect(permissionsOf('developer')).toEqual({
      manageSuppressions: true,
      manageDomains: false,
      manageKeys: true,
      manageMembers: false,
      readAudit: false,
      issueAllScopesLiveKeys: false,
      manageTemplates: true,
      sendTestEmails: true,
      manageInbound: true,
    });
  });

  it('lets a viewer change nothing', () => {
    expect(Object.values(permissionsOf('viewer'))).toEqual(CONSOLE_ACTIONS.map(() => false));
  });

  it('refuses with RoleNotAllowed, naming the role and the action for people', () => {
    const error = refusal(() => requireRole('viewer', 'manageSuppressions', 'add suppressions'));
    expect(error?.code).toBe('RoleNotAllowed');
    expect(error?.message).toBe('A viewer cannot add suppressions; ask an admin of the organization');
    expect(refusal(() => requireRole('admin', 'manageMembers', 'invite members'))).toBeUndefined();
  });
});

describe('who may issue which API key', () => {
  const everyScope = [...API_KEY_SCOPES];

  it('given an admin, when they issue a live key with every scope, then it is allowed', () => {
    expect(refusal(() => requireKeyIssuer('admin', { mode: 'live', scopes: everyScope }))).toBeUndefined();
  });

  it('given a developer, when they issue a live key with every scope, then it is refused', () => {
    const error = refusal(() => requireKeyIssuer('developer', { mode: 'live', scopes: everyScope }));
    expect(error?.code).toBe('RoleNotAllowed');
    expect(error?.message).toContain('A developer cannot create a live key with every scope');
  });

  it('given a developer, when they issue a test key with every scope or a live key with fewer, then it is allowed', () => {
    expect(refusal(() => requireKeyIssuer('developer', { mode: 'test', scopes: everyScope }))).toBeUndefined();
    expect(
      refusal(() => requireKeyIssuer('developer', { mode: 'live', scopes: ['email:send', 'email:read'] })),
    ).toBeUndefined();
  });

  it('given a viewer, when they issue any key, then it is refused', () => {
    expect(refusal(() => requireKeyIssuer('viewer', { mode: 'test', scopes: ['email:read'] }))?.code).toBe(
      'RoleNotAllowed',
    );
  });
});
