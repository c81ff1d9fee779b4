/**
 * The templates view from the log: the projector builds it from the accounts topic (every version, in whatever
 * order its keys' events arrive), and a replay rebuilds it equal and swaps it in.
 */
import { randomUUID } from 'node:crypto';
import { replayView } from '@sendline/application';
import {
  templateLibraryDecider,
  type TemplateCommand,
  type TemplateEvent,
  type TemplateLibraryState,
} from '@sendline/domain';
import { startProjector, type RunningProjector } from '@sendline/projector';
import {
  createClickHouse,
  createRedis,
  deleteKeys,
  scanKeys,
  TemplatesView,
  type ClickHouseClient,
  type EventStore,
  type Redis,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';

function decided(organizationId: string, commands: [TemplateCommand['type'], TemplateCommand['data']][]) {
  let state: TemplateLibraryState = templateLibraryDecider.initialState();
  let now = Date.UTC(2026, 10, 1);
  const events: TemplateEvent[] = [];
  for (const [type, data] of commands) {
    const metadata = { organizationId, now: (now += 60_000), eventIds: [randomUUID()] };
    for (const event of templateLibraryDecider.decide({ type, data, metadata } as TemplateCommand, state)) {
      events.push(event);
      state = templateLibraryDecider.evolve(state, event);
    }
  }
  return events;
}

describe('the templates view', () => {
  let store: EventStore;
  let redis: Redis;
  let projector: RunningProjector;
  let clickhouse: ClickHouseClient;
  const namespace = uniqueName('test-templates');
  const prefix = uniqueName('projector');
  const [orgA, orgB] = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    store = await freshEventStore('templates-test');
    redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const a = decided(orgA, [
      [
        'CreateTemplate',
        { templateId: 1, name: 'Brand', alias: 'brand', templateType: 'Layout', htmlBody: '{{{ @content }}}' },
      ],
      [
        'CreateTemplate',
        { templateId: 2, name: 'Welcome', alias: 'welcome', subject: 'Hi', textBody: 'v1', layoutTemplate: 'brand' },
      ],
      ['EditTemplate', { idOrAlias: 'welcome', textBody: 'v2' }],
      ['EditTemplate', { idOrAlias: 'welcome', textBody: 'v3' }],
      ['CreateTemplate', { templateId: 3, name: 'Gone', alias: 'gone', subject: 's', textBody: 't' }],
      ['EditTemplate', { idOrAlias: 'gone', textBody: 't2' }],
      ['DeleteTemplate', { idOrAlias: 'gone' }],
    ]);
    const b = decided(orgB, [
      ['CreateTemplate', { templateId: 2, name: 'Theirs', alias: 'welcome', subject: 'x', textBody: 'y' }],
    ]);
    // Newest first: each version is its own key, so the view must not depend on their order.
    await store.append([...a].reverse());
    await store.append(b);
    // Only the templates view runs: the activity store is given, never written.
    clickhouse = createClickHouse(addresses.clickhouseUrl);
    projector = await startProjector({
      store,
      redis,
      clickhouse,
      database: addresses.clickhouseDatabase,
      namespace,
      groupPrefix: prefix,
      projections: ['templates'],
      retention: false,
      sessionTimeoutMs: 6000,
    });
    const view = new TemplatesView(redis, namespace);
    await eventually(
      async () =>
        (await view.library(orgA)).deletedIds.size === 1 && (await view.library(orgB)).templates.size === 1
          ? true
          : undefined,
      60_000,
      'the projector to build the templates view',
    );
  });
  afterAll(async () => {
    await projector?.stop();
    await clickhouse?.close();
    await deleteKeys(redis, `${namespace}*`);
    redis.disconnect();
    await deleteTopicsAndDisconnect(store);
  });

  it('holds each template at its highest version, every version, and no deleted template', async () => {
    const view = new TemplatesView(redis, namespace);
    const library = await view.library(orgA);
    expect([...library.templates.keys()].sort()).toEqual([1, 2]);
    expect(library.templates.get(2)).toMatchObject({ version: 3, textBody: 'v3', layoutTemplate: 'brand' });
    expect((await view.versions(orgA, 2))?.map((v) => v.textBody)).toEqual(['v1', 'v2', 'v3']);
    expect(await view.versions(orgA, 3)).toBeNull();
    expect((await view.library(orgB)).templates.get(2)).toMatchObject({ name: 'Theirs', version: 1 });
    // What a send reads: the template it names and its layout, nothing else.
    expect([...(await view.libraryFor(orgA, ['WELCOME'])).templates.keys()]).toEqual([1, 2]);
    expect([...(await view.libraryFor(orgA, ['gone', 3])).templates.keys()]).toEqual([]);
  });

  it('a replay rebuilds it equal and swaps it in', async () => {
    const view = new TemplatesView(redis, namespace);
    const before = [await view.library(orgA), await view.library(orgB)];
    const report = await replayView('templates', {
      store,
      redis,
      namespace,
      liveGroupId: `${prefix}-templates`,
      settleMs: 300,
    });
    expect(report).toMatchObject({
      view: 'templates',
      equal: true,
      swapped: true,
      organizations: { live: 2, rebuilt: 2 },
    });
    expect(report.events).toBe(8);
    expect([await view.library(orgA), await view.library(orgB)]).toEqual(before);
    expect(await scanKeys(redis, `${namespace}.replay.*`)).toEqual([]);
  });
});
