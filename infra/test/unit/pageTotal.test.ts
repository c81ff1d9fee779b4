import { describe, expect, it } from 'vitest';
import { pageTotal } from '../../src';

// A search's count and its page are two queries; what the answer's total is when they saw different moments.
describe('pageTotal', () => {
  it('a full page: the count, or more when the page saw more than the count did', () => {
    expect(pageTotal(40, 0, 10, 10)).toBe(40);
    expect(pageTotal(40, 30, 10, 10)).toBe(40);
    // Landed between the count and the page: the page reaches further than the count says.
    expect(pageTotal(35, 30, 10, 10)).toBe(40);
  });

  it('a short page read every match from its offset on: offset + its length, whatever the count saw', () => {
    expect(pageTotal(2, 0, 10, 1)).toBe(1);
    expect(pageTotal(0, 0, 10, 1)).toBe(1);
    expect(pageTotal(25, 20, 10, 3)).toBe(23);
  });

  it('an empty first page means no match; an empty later page, at most its offset', () => {
    expect(pageTotal(1, 0, 10, 0)).toBe(0);
    expect(pageTotal(5, 20, 10, 0)).toBe(5);
    expect(pageTotal(21, 20, 10, 0)).toBe(20);
  });

  it('a count of zero asks for the total only', () => {
    expect(pageTotal(7, 0, 0, 0)).toBe(7);
  });
});
