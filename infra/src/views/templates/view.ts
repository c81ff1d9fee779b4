import {
  initialTemplateLibraryState,
  templateStateOf,
  type TemplateEvent,
  type TemplateLibraryState,
  type TemplateState,
} from '@sendline/domain';
import type { Redis } from 'ioredis';
import type { ViewWriter } from '../positions';

/**
 * The templates view in Redis, built from the `accounts` topic: every version of every template of an
 * organization, and which templates are deleted.
 *
 *   <ns>:tpl:orgs                  set of the organizations that have (or had) templates
 *   <ns>:tpl:<org>                 set of the organization's template ids, deleted ones included
 *   <ns>:tpl:<org>:<id>            hash: `v<n>` → the template at version n (JSON TemplateState), `deleted` → JSON
 *
 * Each version is its own Kafka key and so may be read in any order after another key (a replay, partitions):
 * every write sets its own field, so the order of events does not matter and applying one twice changes nothing.
 * The current template is its highest version; a template with a `deleted` field is gone (its versions are kept
 * in Redis, never shown: a deleted template's id is never used again).
 */
export class TemplatesView {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
  ) {}

  get organizationsKey(): string {
    return `${this.namespace}:tpl:orgs`;
  }
  libraryKey(organizationId: string): string {
    return `${this.namespace}:tpl:${organizationId}`;
  }
  templateKey(organizationId: string, templateId: number | string): string {
    return `${this.namespace}:tpl:${organizationId}:${templateId}`;
  }

  /** Applies events at once, without a position (the API reading its own write right after the broker's ack). */
  async apply(events: readonly TemplateEvent[]): Promise<void> {
    if (events.length === 0) return;
    const p = this.redis.pipeline();
    for (const event of events) this.write(p, event);
    const results = await p.exec();
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
  }

  write(p: ViewWriter, event: TemplateEvent): void {
    const org = event.metadata.organizationId;
    p.sadd(this.organizationsKey, org);
    p.sadd(this.libraryKey(org), String(event.data.templateId));
    const key = this.templateKey(org, event.data.templateId);
    switch (event.type) {
      case 'TemplateCreated':
      case 'TemplateEdited':
        p.hset(key, `v${event.data.version}`, JSON.stringify(templateStateOf(event)));
        break;
      case 'TemplateDeleted':
        p.hset(key, 'deleted', JSON.stringify({ at: event.metadata.occurredAt, version: event.data.version }));
        break;
      default: {
        const _exhaustive: never = event;
        throw new Error(`unknown template event ${JSON.stringify(_exhaustive)}`);
      }
    }
  }

  async organizations(): Promise<string[]> {
    return (await this.redis.smembers(this.organizationsKey)).sort();
  }

  /** Template id → every version (oldest first) and whether it is deleted, in two round trips. */
  private async all(organizationId: string): Promise<Map<number, { versions: TemplateState[]; deleted: boolean }>> {
    const ids = (await this.redis.smembers(this.libraryKey(organizationId))).map(Number).sort((a, b) => a - b);
    const out = new Map<number, { versions: TemplateState[]; deleted: boolean }>();
    if (ids.length === 0) return out;
    const p = this.redis.pipeline();
    for (const id of ids) p.hgetall(this.templateKey(organizationId, id));
    const results = (await p.exec()) ?? [];
    ids.forEach((id, i) => {
      const [error, fields] = results[i] ?? [null, {}];
      if (error) throw error;
      out.set(id, parseTemplateHash(fields as Record<string, string>));
    });
    return out;
  }

  /** The organization's templates as the template library decider holds them (what every template use case reads). */
  async library(organizationId: string): Promise<TemplateLibraryState> {
    const state = initialTemplateLibraryState();
    const templates = new Map<number, TemplateState>();
    const deletedIds = new Set<number>();
    for (const [id, { versions, deleted }] of await this.all(organizationId)) {
      if (deleted) deletedIds.add(id);
      else if (versions.length > 0) templates.set(id, versions.at(-1)!);
    }
    return { ...state, templates, deletedIds };
  }

  /** Every version of one template, oldest first; null when it does not exist or is deleted. */
  async versions(organizationId: string, templateId: number): Promise<TemplateState[] | null> {
    const fields = await this.redis.hgetall(this.templateKey(organizationId, templateId));
    const { versions, deleted } = parseTemplateHash(fields);
    return deleted || versions.length === 0 ? null : versions;
  }

  /** One version of one template (a message's details name it), deleted or not; null when unknown. */
  async version(organizationId: string, templateId: number, version: number): Promise<TemplateState | null> {
    const json = await this.redis.hget(this.templateKey(organizationId, templateId), `v${version}`);
    return json ? (JSON.parse(json) as TemplateState) : null;
  }
}

function parseTemplateHash(fields: Record<string, string>): { versions: TemplateState[]; deleted: boolean } {
  const versions = Object.entries(fields)
    .filter(([field]) => /^v\d+$/.test(field))
    .map(([, json]) => JSON.parse(json) as TemplateState)
    .sort((a, b) => a.version - b.version);
  return { versions, deleted: 'deleted' in fields };
}
