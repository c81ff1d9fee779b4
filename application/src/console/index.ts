/**
 * The web console's own use cases (issue 13): passwordless sign-in by a one-time link sent as system mail, and the
 * session a signed-in member works in. Every change a member makes goes through the same use cases as the admin
 * command line (accounts/, suppressions/); what a role may do is the domain's (domain/src/accounts/roles.ts).
 */
export * from './signIn';
