/**
 * The console's commands, one file per group (organizations and allowance, members, domains, keys, suppressions,
 * replay). Each adds its commands to the program with the kit program.ts makes (context, --json output); each
 * group's JSON shapes give times as ISO 8601, UTC.
 */
export { organizationCommands, organizationJson, parseAllowance } from './organizations';
export { memberCommands, memberJson } from './members';
export { domainCommands, domainJson } from './domains';
export { keyCommands, keyJson, parseScopes } from './keys';
export { suppressionCommands } from './suppressions';
export { replayCommand } from './replay';
export { systemCommands } from './system';
export type { CommandKit, JsonOption, OrgOption } from './kit';
