import {
  initialTemplateLibraryState,
  templateStateOf,
  type TemplateEvent,
  type TemplateLibraryState,
  type TemplateState,
} from '@sendline/domain';
import type { Redis } from 'ioredis';
import { AuditView } from '../audit/view';
import type { ViewWriter } from '../positions';

/**
 * The templates view in Redis, built from the `accounts` topic: every version of every template of an
 * organization, and which templates are deleted.
 *
 *   <ns>:{templates}:orgs          set of the organizations that have (or had) templates
 *   <ns>:{templates}:<org>         set of the organization's template ids, deleted ones included
 *   <ns>:{templates}:<org>:<id>    hash: `v<n>` → the template at version n (JSON TemplateState), `a<n>` → its alias,
 *                                  type and layout (JSON, what a send looks a template up by), `deleted` → JSON
 *
 * Each version is its own Kafka key and so may be read in any order after another key (a replay, partitions):
 * every write sets its own field, so the order of events does not matter and applying one twice changes nothing.
 * The current template is its highest version; a template with a `deleted` field is gone (its versions are kept
 * in Redis, never shown: a deleted template's id is never used again).
 */
export class TemplatesView {
  private readonly auditView: AuditView;

  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
  ) {
    this.auditView = new AuditView(redis, namespace);
  }

  get organizationsKey(): string {
    return `${this.namespace}:{templates}:orgs`;
  }
  libraryKey(organizationId: string): string {
    return `${this.namespace}:{templates}:${organizationId}`;
  }
  templateKey(organizationId: string, templateId: number | string): string {
    return `${this.namespace}:{templates}:${organizationId}:${templateId}`;
  }

  /**
   * Applies events at once, without a position (the API reading its own write right after the broker's ack), and
   * to the audit (the audit view's, projected from the history topic; the same entry, so written twice is once).
   */
  async apply(events: readonly TemplateEvent[]): Promise<void> {
    if (events.length === 0) return;
    const p = this.redis.pipeline();
    for (const event of events) {
      this.write(p, event);
      this.auditView.write(p, event);
    }
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
        p.hset(
          key,
          `a${event.data.version}`,
          JSON.stringify({
            alias: event.data.alias,
            templateType: event.data.templateType,
            layoutTemplate: event.data.layoutTemplate,
          } satisfies TemplateLookup),
        );
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

  /** Each template's current version number (0: none), and which are deleted: one HKEYS each, names only. */
  private async currentVersions(
    organizationId: string,
  ): Promise<{ current: { id: number; version: number }[]; deletedIds: Set<number> }> {
    const ids = (await this.redis.smembers(this.libraryKey(organizationId))).map(Number).sort((a, b) => a - b);
    const names = await this.pipelined<string[]>(ids.map((id) => ['hkeys', this.templateKey(organizationId, id)]));
    const current: { id: number; version: number }[] = [];
    const deletedIds = new Set<number>();
    ids.forEach((id, i) => {
      const fields = names[i] ?? [];
      if (fields.includes('deleted')) deletedIds.add(id);
      else {
        const highest = Math.max(0, ...fields.filter((f) => /^v\d+$/.test(f)).map((f) => Number(f.slice(1))));
        if (highest > 0) current.push({ id, version: highest });
      }
    });
    return { current, deletedIds };
  }

  private async versionsOf(
    organizationId: string,
    wanted: readonly { id: number; version: number }[],
  ): Promise<Map<number, TemplateState>> {
    const jsons = await this.pipelined<string | null>(
      wanted.map(({ id, version }) => ['hget', this.templateKey(organizationId, id), `v${version}`]),
    );
    const templates = new Map<number, TemplateState>();
    wanted.forEach(({ id }, i) => {
      const json = jsons[i];
      if (json) templates.set(id, JSON.parse(json) as TemplateState);
    });
    return templates;
  }

  /**
   * The organization's templates as the template library decider holds them (what every template change reads):
   * each template's highest version, and the deleted ids. Only the current versions are read.
   */
  async library(organizationId: string): Promise<TemplateLibraryState> {
    const { current, deletedIds } = await this.currentVersions(organizationId);
    return { ...initialTemplateLibraryState(), templates: await this.versionsOf(organizationId, current), deletedIds };
  }

  /**
   * What a send needs: only the templates `names` name (by id or alias, case-insensitively) and the layouts they
   * sit in, as a library to render from. Reads names and aliases first, then those templates' bodies only, so a
   * send costs the same however many templates the organization has.
   */
  async libraryFor(organizationId: string, names: readonly (string | number)[]): Promise<TemplateLibraryState> {
    const { current, deletedIds } = await this.currentVersions(organizationId);
    const lookups = await this.pipelined<string | null>(
      current.map(({ id, version }) => ['hget', this.templateKey(organizationId, id), `a${version}`]),
    );
    const entries = current.map((entry, i) => ({
      ...entry,
      lookup: JSON.parse(lookups[i] ?? 'null') as TemplateLookup | null,
    }));
    const byName = (name: string | number) =>
      typeof name === 'number' || /^\d+$/.test(name)
        ? entries.find((e) => e.id === Number(name))
        : entries.find((e) => e.lookup?.alias?.toLowerCase() === name.toLowerCase());
    const wanted = new Map<number, { id: number; version: number }>();
    for (const name of names) {
      const entry = byName(name);
      if (!entry) continue;
      wanted.set(entry.id, entry);
      const layout = entry.lookup?.layoutTemplate ? byName(entry.lookup.layoutTemplate) : undefined;
      if (layout) wanted.set(layout.id, layout);
    }
    return {
      ...initialTemplateLibraryState(),
      templates: await this.versionsOf(
        organizationId,
        [...wanted.values()].sort((a, b) => a.id - b.id),
      ),
      deletedIds,
    };
  }

  private async pipelined<T>(commands: [string, ...string[]][]): Promise<T[]> {
    if (commands.length === 0) return [];
    const results = (await this.redis.pipeline(commands).exec()) ?? [];
    return results.map(([error, value]) => {
      if (error) throw error;
      return value as T;
    });
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

/** What a send looks a template up by, kept beside each version (`a<n>`). */
interface TemplateLookup {
  alias: string | null;
  templateType: string;
  layoutTemplate: string | null;
}

function parseTemplateHash(fields: Record<string, string>): { versions: TemplateState[]; deleted: boolean } {
  const versions = Object.entries(fields)
    .filter(([field]) => /^v\d+$/.test(field))
    .map(([, json]) => JSON.parse(json) as TemplateState)
    .sort((a, b) => a.version - b.version);
  return { versions, deleted: 'deleted' in fields };
}
