import { API_KEY_MODES, API_KEY_SCOPES, expandScopes } from '@sendline/domain';
import type { ApiKeySummary } from '@sendline/application';
import { Option, type Command } from 'commander';
import { fields, isoTime, shortTime, table } from '../format';
import { orgOption, type CommandKit, type OrgOption } from './kit';

/** `admin key create|revoke|list`: an organization's API keys (a key is printed once, never stored). */

export function keyJson(key: ApiKeySummary) {
  return {
    id: key.id,
    name: key.name,
    mode: key.mode,
    scopes: key.scopes,
    prefix: key.prefix,
    issuedAt: isoTime(key.issuedAt),
    revokedAt: isoTime(key.revokedAt),
  };
}

function keysTable(keys: ApiKeySummary[]): string {
  if (keys.length === 0) return 'No API keys.';
  return table(
    ['id', 'name', 'mode', 'scopes', 'prefix', 'issued', 'revoked'],
    keys.map((k) => [
      k.id,
      k.name,
      k.mode,
      k.scopes.join(','),
      `${k.prefix}…`,
      shortTime(k.issuedAt),
      shortTime(k.revokedAt),
    ]),
  );
}

/** `email:send,email:read` (commas or spaces), or `all`. Unknown scopes are left to the decider to refuse. */
export function parseScopes(value: string): string[] {
  const scopes = value
    .split(/[\s,]+/)
    .map((scope) => scope.trim())
    .filter(Boolean);
  return expandScopes(scopes);
}

export function keyCommands(program: Command, { context, emit, leaf }: CommandKit): void {
  const key = program.command('key').description("an organization's API keys");
  leaf(key, 'create', 'issue an API key; the key is printed once and never stored')
    .addOption(orgOption())
    .requiredOption('--scopes <scopes>', `comma-separated: ${API_KEY_SCOPES.join(', ')}; or all`)
    .addOption(new Option('--mode <mode>', 'test keys send nothing').choices(API_KEY_MODES).makeOptionMandatory())
    .option('--name <name>', 'a name to recognise the key by (default: "<mode> key")')
    .action(async (options: OrgOption & { scopes: string; mode: string; name?: string }) => {
      const issued = await context.accounts.issueApiKey(options.org, {
        name: options.name ?? `${options.mode} key`,
        scopes: parseScopes(options.scopes),
        mode: options.mode,
      });
      emit(options, { ...keyJson(issued), key: issued.token }, () =>
        [
          'API key issued. Copy it now: it is shown only this once and cannot be recovered.',
          '',
          `  ${issued.token}`,
          '',
          fields([
            ['id', issued.id],
            ['name', issued.name],
            ['mode', issued.mode],
            ['scopes', issued.scopes.join(', ')],
            ['prefix', `${issued.prefix}…`],
            ['issued', shortTime(issued.issuedAt)],
          ]),
        ].join('\n'),
      );
    });
  leaf(key, 'revoke', 'revoke an API key (refused by the API at once)')
    .addOption(orgOption())
    .requiredOption('--key <id>', 'the key id (admin key list shows it)')
    .action(async (options: OrgOption & { key: string }) => {
      const revoked = await context.accounts.revokeApiKey(options.org, options.key);
      emit(options, keyJson(revoked), () => `API key ${revoked.id} (${revoked.prefix}…) revoked.`);
    });
  leaf(key, 'list', 'list the API keys (never the keys themselves)')
    .addOption(orgOption())
    .action(async (options: OrgOption) => {
      const keys = await context.accounts.listApiKeys(options.org);
      emit(options, keys.map(keyJson), () => keysTable(keys));
    });
}
