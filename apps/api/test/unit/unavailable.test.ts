import { InfrastructureError, RetriesExhaustedError, ServiceUnavailableError } from '@sendline/infra';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerErrorHandling, RETRY_AFTER_SECONDS } from '../../src/errors';

/** A route that fails with `error`, answered by the API's one error handler. */
async function answerTo(error: Error) {
  const app = Fastify();
  registerErrorHandling(app);
  app.get('/fails', async () => {
    throw error;
  });
  const response = await app.inject({ method: 'GET', url: '/fails' });
  await app.close();
  return { status: response.statusCode, retryAfter: response.headers['retry-after'], body: response.json() };
}

/** What ioredis rejects a command with when its connection is gone (its own messages and class name). */
function ioredisError(message: string, name = 'Error'): Error {
  const error = new Error(message);
  Object.defineProperty(error, 'name', { value: name });
  return error;
}

describe('a service out of reach is a 503 naming it, with Retry-After', () => {
  it.each([
    ['a Redis command that timed out', ioredisError('Command timed out'), /Redis/],
    ['a Redis connection that closed', ioredisError('Connection is closed.'), /Redis/],
    [
      'a Redis command out of retries',
      ioredisError('Reached the max retries per request limit (which is 1).', 'MaxRetriesPerRequestError'),
      /Redis/,
    ],
    ['a Redis loading its append-only file', ioredisError('LOADING Redis is loading the dataset in memory'), /Redis/],
    [
      'no Kafka broker reachable',
      new ServiceUnavailableError('kafka', 'no Kafka broker is reachable', { retriable: false }),
      /Kafka/,
    ],
    [
      'Kafka not acknowledging in time',
      new InfrastructureError('AppendTimeout', 'Kafka did not acknowledge', { retriable: false }),
      /Kafka/,
    ],
    [
      'a schema that cannot be registered',
      new InfrastructureError('SchemaRegistrationFailed', 'could not register', { retriable: true }),
      /schema registry/,
    ],
    [
      'ClickHouse out of reach',
      new ServiceUnavailableError('clickhouse', 'the activity store cannot be reached', { retriable: true }),
      /ClickHouse/,
    ],
  ])('%s', async (_what, error, service) => {
    const answer = await answerTo(error);
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe(String(RETRY_AFTER_SECONDS));
    expect(answer.body.ErrorCode).toBe(503);
    expect(answer.body.Message).toMatch(service);
    expect(answer.body.Message).toMatch(/temporarily unavailable\. Retry later\.$/);
  });

  it('names the service behind retries that ran out', async () => {
    const answer = await answerTo(new RetriesExhaustedError(3, ioredisError('Connection is closed.')));
    expect(answer.status).toBe(503);
    expect(answer.body.Message).toMatch(/Redis/);
  });

  it('answers another infrastructure failure 503 without naming a service', async () => {
    const answer = await answerTo(new InfrastructureError('Something', 'failed', { retriable: true }));
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe(String(RETRY_AFTER_SECONDS));
    expect(answer.body).toEqual({ ErrorCode: 503, Message: 'The service is temporarily unavailable. Retry later.' });
  });

  it('keeps an unknown failure a 500 without Retry-After', async () => {
    const answer = await answerTo(new Error('a bug'));
    expect(answer.status).toBe(500);
    expect(answer.retryAfter).toBeUndefined();
  });
});
