/**
 * System mail: email our own processes send to people (a console sign-in link, "your webhook was disabled"),
 * through the same send use case as POST /email — signed, delivered, tracked and suppressed like any message —
 * from the system sender (`SENDLINE_SYSTEM_SENDER`), on behalf of the system organization, which owns the
 * sender's domain. `ensureSystemOrganization` provisions that organization idempotently.
 */
export * from './systemSender';
export * from './systemMail';
export * from './provision';
