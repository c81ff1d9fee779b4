/**
 * Where the services are. Each address comes from the environment; without it,
 * the local service that `npm run infra -- up` starts on 127.0.0.1.
 */
export interface ServiceAddresses {
  kafkaBrokers: string[];
  schemaRegistryUrl: string;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  redisUrl: string;
}

export function serviceAddresses(env: NodeJS.ProcessEnv = process.env): ServiceAddresses {
  return {
    kafkaBrokers: (env.KAFKA_BROKERS ?? '127.0.0.1:9092')
      .split(',')
      .map((broker) => broker.trim())
      .filter(Boolean),
    schemaRegistryUrl: env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8081/apis/ccompat/v7',
    clickhouseUrl: env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123',
    clickhouseDatabase: env.CLICKHOUSE_DATABASE ?? 'sendline',
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
}
