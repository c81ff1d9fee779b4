import { describe, expect, it } from 'vitest';
import { EndpointPool, HARD_QUEUE_FACTOR } from '../../src';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('the endpoint pool', () => {
  it('a stuck endpoint holds only its own slots: another endpoint’s calls run meanwhile', async () => {
    const pool = new EndpointPool(2, 10, 100);
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    for (let i = 0; i < 5; i++) pool.submit('dead', () => stuck.then(() => void ran.push('dead')));
    for (let i = 0; i < 3; i++) pool.submit('alive', async () => void ran.push('alive'));
    await tick();
    expect(ran).toEqual(['alive', 'alive', 'alive']);
    expect(pool.queueLength('dead')).toBe(3);
    release();
    await pool.idle();
    expect(ran.filter((name) => name === 'dead')).toHaveLength(5);
  });

  it('never runs more than the overall limit at once', async () => {
    const pool = new EndpointPool(10, 3, 100);
    let running = 0;
    let most = 0;
    for (let i = 0; i < 20; i++) {
      pool.submit(`e${i % 7}`, async () => {
        running++;
        most = Math.max(most, running);
        await tick();
        running--;
      });
    }
    await pool.idle();
    expect(most).toBe(3);
  });

  it('is busy only when calls wait for a slot overall, not when they wait behind their own dead endpoint', async () => {
    const pool = new EndpointPool(1, 2, 100);
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    for (let i = 0; i < 50; i++) pool.submit('dead', () => stuck);
    pool.submit('slow', () => stuck);
    expect(pool.busy()).toBe(false);
    pool.submit('other', () => stuck);
    expect(pool.busy()).toBe(false);
    pool.submit('another', () => stuck);
    expect(pool.busy()).toBe(true);
    release();
    await pool.idle();
    expect(pool.busy()).toBe(false);
  });

  it('a dead endpoint is backed up once its waiting calls would wait too long at its pace', async () => {
    let clock = 0;
    const pool = new EndpointPool(2, 10, 5, 1000, () => clock);
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    for (let i = 0; i < 6; i++) pool.submit('dead', () => stuck);
    expect(pool.backedUp('dead')).toBe(false); // under its queue limit
    pool.submit('dead', () => stuck);
    // 5 wait; its 2 running calls have not answered for 10 ms: 5 × 10 / 2 = 25 ms of waiting, not too long.
    clock = 10;
    expect(pool.backedUp('dead')).toBe(false);
    // Not answered for 2 s: 5 × 2000 / 2 = 5 s of waiting, past the 1 s allowed.
    clock = 2000;
    expect(pool.backedUp('dead')).toBe(true);
    expect(pool.backedUp('other')).toBe(false);
    release();
    await pool.idle();
  });

  it('a fast endpoint with many calls waiting (a fetched batch) is not backed up, unless past the hard limit', async () => {
    let clock = 0;
    const pool = new EndpointPool(2, 10, 10, 1000, () => clock);
    // Its calls take 1 ms.
    for (let i = 0; i < 4; i++) pool.submit('fast', async () => void (clock += 1));
    await pool.idle();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    for (let i = 0; i < 152; i++) pool.submit('fast', () => held);
    // 150 wait: about 150 × 1 / 2 = 75 ms at its pace.
    expect(pool.backedUp('fast')).toBe(false);
    for (let i = 0; i < 10 * HARD_QUEUE_FACTOR; i++) pool.submit('fast', () => held);
    expect(pool.backedUp('fast')).toBe(true);
    release();
    await pool.idle();
  });
});
