/** The bench's baseline: a bare fastify route answering a send with the same JSON, without Kafka or Redis. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const answer = () => ({
  To: 'r1@example.net',
  SubmittedAt: new Date().toISOString(),
  MessageID: '00000000-0000-4000-8000-000000000000',
  ErrorCode: 0,
  Message: 'OK',
});
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/v1/email', async () => answer());
await app.listen({ host: '127.0.0.1', port: Number(process.env.BARE_PORT ?? 3902) });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
