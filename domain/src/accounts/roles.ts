import { DomainError } from '../domainError';
import { API_KEY_SCOPES, type Role } from './rules';

/**
 * What each member role may do in the console: one table, read by the console's endpoints (which refuse) and by
 * `GET /console/api/me`'s `can` (so the pages hide what the server refuses). Reading (overview, activity,
 * suppressions, domains, keys, members, templates) is every member's; the table names the changes and the audit.
 */
export const CONSOLE_ACTIONS = [
  'manageSuppressions',
  'manageDomains',
  'manageKeys',
  'manageMembers',
  'readAudit',
  'issueAllScopesLiveKeys',
  'manageTemplates',
  'sendTestEmails',
  'manageInbound',
] as const;
export type ConsoleAction = (typeof CONSOLE_ACTIONS)[number];

const ALLOWED: Readonly<Record<ConsoleAction, readonly Role[]>> = {
  manageSuppressions: ['admin', 'developer'],
  manageDomains: ['admin'],
  manageKeys: ['admin', 'developer'],
  manageMembers: ['admin'],
  readAudit: ['admin'],
  // A live key with every scope can do all the organization's API can: an admin's call.
  issueAllScopesLiveKeys: ['admin'],
  manageTemplates: ['admin', 'developer'],
  // A test of a template is a real send (delivered, counted in the allowance), to the member's own address.
  sendTestEmails: ['admin', 'developer'],
  // The inbound hook URL and rules, a failed message retried, a blocked one let through (the API's webhooks:manage).
  manageInbound: ['admin', 'developer'],
};

export function roleMay(role: Role, action: ConsoleAction): boolean {
  return ALLOWED[action].includes(role);
}

/** Every action with whether `role` may take it (the `can` of the console's /me). */
export function permissionsOf(role: Role): Record<ConsoleAction, boolean> {
  return Object.fromEntries(CONSOLE_ACTIONS.map((action) => [action, roleMay(role, action)])) as Record<
    ConsoleAction,
    boolean
  >;
}

/**
 * Refuses with DomainError 'RoleNotAllowed' when `role` may not take `action`; `doing` names it for people
 * ("add suppressions"): "A viewer cannot add suppressions; ask an admin of the organization".
 */
export function requireRole(role: Role, action: ConsoleAction, doing: string): void {
  if (roleMay(role, action)) return;
  const article = /^[aeiou]/.test(role) ? 'An' : 'A';
  throw new DomainError('RoleNotAllowed', `${article} ${role} cannot ${doing}; ask an admin of the organization`, {
    role,
    action,
  });
}

/** Whether scopes hold every scope an API key can have. */
export function hasEveryScope(scopes: readonly string[]): boolean {
  return API_KEY_SCOPES.every((scope) => scopes.includes(scope));
}

/**
 * Who may issue which key: an admin any; a developer any but a live key with every scope; a viewer none.
 * Refuses with DomainError 'RoleNotAllowed'.
 */
export function requireKeyIssuer(role: Role, key: { mode: string; scopes: readonly string[] }): void {
  requireRole(role, 'manageKeys', 'create API keys');
  if (key.mode === 'live' && hasEveryScope(key.scopes)) {
    requireRole(role, 'issueAllScopesLiveKeys', 'create a live key with every scope');
  }
}
