import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { TEMPLATE_EVENT_TYPES, templateLibraryDecider } from '../../domain/src/templates';
import type { TemplateCommand, TemplateEvent, TemplateLibraryState } from '../../domain/src/templates';
import { fromAvroRecord, schemaOf, toAvroRecord } from '../src';

/** Every template event type has an Avro schema that carries its events without loss. */

const ORG = '1b6f2f7e-3c1d-4d0e-9a57-2b8e8f0c5d11';
let clock = Date.UTC(2025, 2, 3, 10, 0, 0, 123);
let ids = 0;

function sampleEvents(): TemplateEvent[] {
  const commands: Array<[TemplateCommand['type'], TemplateCommand['data']]> = [
    [
      'CreateTemplate',
      { templateId: 7, name: 'Basic', alias: 'basic', templateType: 'Layout', htmlBody: '<b>{{{ @content }}}</b>' },
    ],
    ['CreateTemplate', { templateId: 8, name: 'Welcome', alias: 'welcome', subject: 'Hi {{name}}', textBody: 'Hi' }],
    ['EditTemplate', { idOrAlias: '8', layoutTemplate: 'basic', htmlBody: '<p>{{ name }}</p>' }],
    ['DeleteTemplate', { idOrAlias: 'welcome' }],
  ];
  let state: TemplateLibraryState = templateLibraryDecider.initialState();
  const events: TemplateEvent[] = [];
  for (const [type, data] of commands) {
    clock += 60_000;
    const metadata = { organizationId: ORG, now: clock, eventIds: [`event-${++ids}`], actor: 'api key sl_live_ab12' };
    for (const event of templateLibraryDecider.decide({ type, data, metadata } as TemplateCommand, state)) {
      events.push(event);
      state = templateLibraryDecider.evolve(state, event);
    }
  }
  return events;
}

describe('template event schemas', () => {
  it('cover every template event type', () => {
    expect(new Set(sampleEvents().map((e) => e.type))).toEqual(new Set(TEMPLATE_EVENT_TYPES));
  });
  it('carry each event without loss', () => {
    for (const event of sampleEvents()) {
      const type = avro.Type.forSchema(schemaOf(event.type) as avro.Schema);
      const decoded = type.fromBuffer(type.toBuffer(toAvroRecord(event)));
      expect(fromAvroRecord(event.type, decoded)).toEqual(event);
    }
  });
});
