import { describe, expect, it } from 'vitest';
import {
  InfrastructureError,
  isOutage,
  RetriesExhaustedError,
  ServiceUnavailableError,
  unavailableService,
} from '../../src';

const redisClosed = () => new Error('Connection is closed.');
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });

describe('which service a failure says is out of reach', () => {
  it('reads the Redis client’s connection failures as Redis', () => {
    expect(unavailableService(new Error('Command timed out'))).toBe('redis');
    expect(unavailableService(redisClosed())).toBe('redis');
  });

  it('reads a network failure under an activity write as ClickHouse, even after retries ran out', () => {
    const write = new InfrastructureError('ActivityWriteFailed', 'writing activity failed', {
      retriable: true,
      cause: new RetriesExhaustedError(3, refused()),
    });
    expect(unavailableService(write)).toBe('clickhouse');
  });

  it('names nobody for a bare network failure it cannot attribute, or for a bug', () => {
    expect(unavailableService(refused())).toBeUndefined();
    expect(unavailableService(new TypeError('x is undefined'))).toBeUndefined();
  });
});

describe('a consumer waits out an outage, and only an outage', () => {
  it('waits when a view write failed because Redis is away', () => {
    expect(isOutage(redisClosed())).toBe(true);
    expect(
      isOutage(
        new InfrastructureError('LedgerUnavailable', 'the ledger failed', { retriable: true, cause: redisClosed() }),
      ),
    ).toBe(true);
  });

  it('waits when the registry is away', () => {
    expect(isOutage(new ServiceUnavailableError('registry', 'cannot read schema 7', { retriable: true }))).toBe(true);
  });

  it('never waits on a failure that declares itself not retriable, whatever its cause (no blind re-send)', () => {
    const guard = new InfrastructureError('DeliveryGuardFailed', 'accepted but the guard could not be written', {
      retriable: false,
      cause: redisClosed(),
    });
    expect(isOutage(guard)).toBe(false);
  });

  it('waits when Kafka did not answer an append (handled again, the same events are appended again)', () => {
    const unreachable = new ServiceUnavailableError('kafka', 'no Kafka broker is reachable', { retriable: false });
    const late = new InfrastructureError('AppendTimeout', 'Kafka did not acknowledge within 5000 ms', {
      retriable: false,
    });
    expect(isOutage(unreachable)).toBe(true);
    expect(isOutage(late)).toBe(true);
  });

  it('does not wait on another failure that declares itself not retriable, even one naming Kafka', () => {
    const refused = new InfrastructureError('AppendFailed', 'Kafka refused the append: MESSAGE_TOO_LARGE', {
      retriable: false,
    });
    const wrapped = new InfrastructureError('DeliveryNotSettled', 'delivery not settled', {
      retriable: false,
      cause: new ServiceUnavailableError('kafka', 'no Kafka broker is reachable', { retriable: false }),
    });
    expect(isOutage(refused)).toBe(false);
    expect(isOutage(wrapped)).toBe(false);
  });
});
