import { API_KEY_MODES, API_KEY_SCOPES, DomainError, MEMBER_ROLES, type DomainErrorCode } from '@sendline/domain';
import { InfrastructureError } from '@sendline/infra';

/** Exit codes of the console. */
export const EXIT = {
  ok: 0,
  /** Bad input or a rule refused the command: fix the command, do not retry it as it is. */
  refused: 1,
  /** A service (Kafka, the schema registry, Redis, DNS) failed or could not be reached. */
  unavailable: 2,
  /** `replay`: the rebuilt view differs from the live one and was not swapped in. */
  differs: 3,
} as const;

/** A command that ran but whose outcome is not success (already printed); the message is the one line for stderr. */
export class OutcomeError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'OutcomeError';
  }
}

/** Bad command-line input found by the console itself (before any rule ran). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const detail = (error: DomainError, name: string): string => String(error.details?.[name] ?? '');

/**
 * DomainError codes as sentences for a person at a terminal, with what to do next where there is
 * something to do. A code not listed keeps the decider's own message.
 */
const READABLE: Partial<Record<DomainErrorCode, (error: DomainError) => string>> = {
  OrganizationNotFound: (e) =>
    `unknown organization ${detail(e, 'organizationId') || ''}`.trim() + ' (admin org list shows the organizations)',
  OrganizationAlreadyExists: (e) => `organization ${detail(e, 'organizationId')} already exists`,
  InvalidOrganizationId: (e) => `${e.message}: an id is 1..100 characters of A-Z a-z 0-9 - _`,
  InvalidOrganizationName: () => 'the organization name must be 1..100 characters without control characters',
  InvalidEmail: (e) => e.message.replace(/^invalid email address/, 'not a valid email address:'),
  InvalidEmailAddress: (e) => `not a valid email address: ${detail(e, 'emailAddress')}`,
  InvalidRole: () => `unknown role; a member is one of: ${MEMBER_ROLES.join(', ')}`,
  MemberAlreadyExists: (e) => `${detail(e, 'email')} is already a member of the organization`,
  MemberNotFound: (e) => `${detail(e, 'email')} is not a member of the organization (admin member list shows them)`,
  CannotRemoveLastAdmin: (e) =>
    `${detail(e, 'email')} is the organization's last admin: add another admin before removing this one`,
  InvalidDomainName: (e) => `bad domain name: ${e.message.replace(/^invalid domain name /, '')}`,
  DomainAlreadyAdded: (e) => `${detail(e, 'domain')} is already a domain of the organization`,
  DomainNotFound: (e) => `${detail(e, 'domain')} is not a domain of the organization (admin domain list shows them)`,
  DomainVerificationFailed: (e) => `domain not verified: ${e.message}`,
  UnknownScope: (e) => `unknown scope ${JSON.stringify(detail(e, 'scope'))}; scopes are: ${API_KEY_SCOPES.join(', ')}`,
  NoScopes: () => `give at least one scope with --scopes (${API_KEY_SCOPES.join(', ')}, or all)`,
  DuplicateScope: (e) => `scope ${detail(e, 'scope')} is given twice`,
  InvalidApiKeyMode: () => `unknown key mode; a key is ${API_KEY_MODES.join(' or ')}`,
  InvalidApiKeyName: () => 'the key name must be 1..100 characters without control characters',
  ApiKeyNotFound: (e) => `no API key ${detail(e, 'keyId')} in this organization (admin key list shows them)`,
  ApiKeyAlreadyRevoked: (e) => `API key ${detail(e, 'keyId')} is already revoked`,
  InvalidAllowance: () => 'the allowance is a whole number of messages per month (0 or more), or unlimited',
  InvalidSuppressionOrigin: () => 'a manual suppression comes from Customer or Admin',
  InvalidMailHost: (e) => `${e.message} (check SENDLINE_MAIL_HOST and SENDLINE_SPF_DOMAIN)`,
  InvalidReturnPathLabel: (e) => `${e.message} (check SENDLINE_RETURN_PATH_LABEL)`,
  ReturnPathNotAssigned: (e) => `${e.message} (admin domain assign-return-path gives it one)`,
};

/** The one line to print for a failure, and the exit code. */
export function describeFailure(error: unknown, redisUrl = 'redis'): { message: string; exitCode: number } {
  if (error instanceof UsageError) return { message: error.message, exitCode: EXIT.refused };
  if (error instanceof OutcomeError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof DomainError) {
    const readable = READABLE[error.code];
    return { message: readable ? readable(error) : error.message, exitCode: EXIT.refused };
  }
  if (error instanceof InfrastructureError) {
    const hint = error.retriable ? ' (try again)' : '';
    return { message: `${error.message}${hint}`, exitCode: EXIT.unavailable };
  }
  const failure = error as (Error & { code?: string; name?: string }) | undefined;
  if (
    failure?.name === 'MaxRetriesPerRequestError' ||
    failure?.code === 'ECONNREFUSED' ||
    /Connection is closed|connect ECONNREFUSED/.test(failure?.message ?? '')
  ) {
    return { message: `cannot reach Redis at ${redisUrl}: ${failure?.message}`, exitCode: EXIT.unavailable };
  }
  return { message: `unexpected failure: ${failure?.message ?? String(error)}`, exitCode: EXIT.unavailable };
}
