import { describe, expect, it } from 'vitest';
import { eventSchemas } from '@sendline/schemas';
import { defaultTopicNames, InfrastructureError, registerEventSchemas, RetriesExhaustedError } from '../../src';

const fast = { initialDelayMs: 1, maxDelayMs: 1 };
const alreadyExists = () =>
  new InfrastructureError('SchemaRegistrationFailed', 'could not register: 409 artifact already exists', {
    retriable: true,
  });

/** A registry that answers each subject's first `failures` calls with `failure`, then an id. */
function registry(failures: number, failure: () => Error) {
  const calls: string[] = [];
  return {
    calls,
    schemaId(topic: string, type: string): Promise<number> {
      calls.push(`${topic} ${type}`);
      const seen = calls.filter((call) => call === `${topic} ${type}`).length;
      return seen <= failures ? Promise.reject(failure()) : Promise.resolve(calls.length);
    },
  };
}

describe('provisioning registers every event schema', () => {
  it('registers each event type once, on the topic it is written to', async () => {
    const codec = registry(0, alreadyExists);
    await expect(registerEventSchemas(codec, defaultTopicNames, fast)).resolves.toBe(eventSchemas.size);
    expect(codec.calls).toHaveLength(eventSchemas.size);
    expect(codec.calls).toContain(`${defaultTopicNames.messages} MessageAccepted`);
    expect(codec.calls).toContain(`${defaultTopicNames.suppressions} SuppressionAdded`);
    expect(codec.calls).toContain(`${defaultTopicNames.received} MailReceived`);
  });

  it('tries a registry that has just started again, when it says the failure is retriable', async () => {
    const codec = registry(2, alreadyExists);
    const retried: number[] = [];
    const registered = await registerEventSchemas(codec, defaultTopicNames, {
      ...fast,
      onRetry: (_error, attempt) => retried.push(attempt),
    });
    expect(registered).toBe(eventSchemas.size);
    expect(codec.calls).toHaveLength(3 * eventSchemas.size);
    expect(retried.filter((attempt) => attempt === 2)).toHaveLength(eventSchemas.size);
  });

  it('gives up after its attempts, naming the last failure', async () => {
    const codec = registry(Infinity, alreadyExists);
    const failure = registerEventSchemas(codec, defaultTopicNames, { ...fast, maxAttempts: 3 });
    await expect(failure).rejects.toBeInstanceOf(RetriesExhaustedError);
    await expect(failure).rejects.toThrow(/after 3 attempts.*artifact already exists/);
    expect(codec.calls).toHaveLength(3);
  });

  it('does not try again a failure that does not say it is retriable', async () => {
    const codec = registry(Infinity, () => new Error('schema is not valid Avro'));
    await expect(registerEventSchemas(codec, defaultTopicNames, fast)).rejects.toThrow('schema is not valid Avro');
    expect(codec.calls).toHaveLength(1);
  });
});
