/**
 * Use cases: what a member of an organization or an operator asks for (create an organization, add a sending
 * domain, issue an API key, suppress an address…), wired to the domain's deciders, the event store (through
 * infra's CommandHandler) and the views. No HTTP and no process.env: the console's command line, the demo and the
 * tests read their configuration (secret key, mail host, DNS servers) and pass it in; the API's console routes
 * (issue 13) will call the same use cases.
 *
 *   accounts/      organizations, members, sending domains, API keys, allowance (the organization decider)
 *   suppressions/  the console's manual suppressions (the suppression decider)
 *   webhooks/      an organization's webhooks (the organization decider), for the API's /webhooks
 *   templates/     an organization's templates and layouts (the template library decider), a template rendered
 *   inbound/       an organization's inbound settings and rules (/server, /triggers/inboundRules), inbound messages
 *   sending/       the send use case (POST /email's: validate, domain, suppressions, allowance, MessageAccepted)
 *   systemMail/    email from our own processes through that use case, as the system organization
 *   console/       the web console's sign-in (one-time links by system mail) and sessions
 *   replay/        a view rebuilt from the log beside the live one, compared and swapped in (admin replay)
 */
export * from './accounts';
export * from './suppressions';
export * from './webhooks';
export * from './templates';
export * from './inbound';
export * from './sending';
export * from './systemMail';
export * from './console';
export * from './replay';
