import { createServer } from 'node:net';

/**
 * Loopback ports for servers a test starts later (a private stack's services, an app process): picked at random
 * below the kernel's ephemeral range (32768–60999 on Linux) and checked free. A port inside that range can be taken
 * between the check and the bind as the local end of any outgoing connection — Kafka clients open many — and the
 * server then dies with EADDRINUSE (CI's API-worker chaos test did). Below it, only another listener can take it.
 */
const LOWEST = 10_000;
const BELOW_EPHEMERAL = 32_768;

/** The first of `size` consecutive free loopback ports (random, so tests running side by side rarely collide). */
export async function freePortBlock(size = 1): Promise<number> {
  const slots = Math.floor((BELOW_EPHEMERAL - LOWEST) / size);
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = LOWEST + size * Math.floor(Math.random() * slots);
    let free = true;
    for (let port = base; port < base + size && free; port++) free = await portFree(port);
    if (free) return base;
  }
  throw new Error(`no block of ${size} free loopback ports found below ${BELOW_EPHEMERAL}`);
}

/** One free loopback port (see freePortBlock). */
export function freePort(): Promise<number> {
  return freePortBlock(1);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
