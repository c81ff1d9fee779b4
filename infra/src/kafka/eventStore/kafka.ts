import { Kafka, logLevel, type Admin, type logCreator } from 'kafkajs';

/**
 * kafkajs's log lines as one JSON line each on stderr. One warning is dropped on
 * purpose: the producer's retries are bounded so that an append the broker does
 * not acknowledge fails (and the API answers 503) instead of hanging forever.
 */
const logCreator: logCreator = () => (entry) => {
  if (entry.log.message.startsWith('Limiting retries for the idempotent producer')) return;
  const { message, ...rest } = entry.log;
  process.stderr.write(
    `${JSON.stringify({ level: entry.label, logger: 'kafkajs', namespace: entry.namespace, message, ...rest })}\n`,
  );
};

export function createKafka(brokers: string[], clientId: string, level: logLevel = logLevel.WARN): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: level,
    logCreator,
    retry: { initialRetryTime: 100, retries: 8 },
    connectionTimeout: 3000,
  });
}

/** Runs `work` with a connected admin client, disconnected afterwards whatever happens. */
export async function withAdmin<T>(kafka: Kafka, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}
