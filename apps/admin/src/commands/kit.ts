import { Option, type Command } from 'commander';
import type { AdminContext } from '../context';

export interface JsonOption {
  json?: boolean;
}
export interface OrgOption extends JsonOption {
  org: string;
}

/** What every command group adds its commands with. */
export interface CommandKit {
  context: AdminContext;
  /** Prints `json` with --json, else the table or sentence `text` makes. */
  emit(options: JsonOption, json: unknown, text: () => string): void;
  /** A command of a group, with --json. */
  leaf(parent: Command, name: string, description: string): Command;
}

/** --org <id>: every command on one organization names it by id. */
export const orgOption = () => new Option('--org <id>', 'the organization id').makeOptionMandatory();
