import { describe, expect, it } from 'vitest';
import { EndpointPool } from '../../src';

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
});
