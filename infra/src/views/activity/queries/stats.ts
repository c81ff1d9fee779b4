import { BOUNCE_KINDS, type BounceKind } from '@sendline/domain';
import { sqlNumber, sqlString } from '../../../clickhouse/client';
import type { ActivityQueries } from './query';
import { utcDay } from '../rows';

/**
 * Outbound statistics from the activity store, per UTC day, for one organization:
 * - sent: messages the mail server took (their first MessageSent), counted on the day they were sent; one message
 *   counts once, whatever its number of recipients (Postmark's "emails sent");
 * - bounces: each bounce of a recipient (the domain's BOUNCE_KINDS: the final failures HardBounced, SoftBounced,
 *   PolicyRejected, and what came back without concluding the delivery, DelayReported, AutoReplied, SpamComplaint),
 *   each event once, on the day it happened.
 * Kept as long as the activity store keeps its messages (30 days).
 */

export interface StatsFilters {
  tag?: string;
  /** Epoch milliseconds, both included. */
  fromDate?: number;
  toDate?: number;
}

export interface SentOnDay {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  sent: number;
}

export interface BouncesOnDay {
  date: string;
  counts: Record<BounceKind, number>;
}

/** Recipient events of some types on one day (`YYYY-MM-DD`, UTC), each type counted, zero when none. */
export interface EventsOnDay<Type extends string> {
  date: string;
  counts: Record<Type, number>;
}

export interface OutboundStatsReader {
  /** Days with at least one message sent, oldest first. */
  sentByDay(organizationId: string, filters: StatsFilters): Promise<SentOnDay[]>;
  /** Days with at least one bounce (of any kind), oldest first. */
  bouncesByDay(organizationId: string, filters: StatsFilters): Promise<BouncesOnDay[]>;
  /** Days with at least one recipient event of `types` (Delivered, Deferred, a bounce kind…), oldest first. */
  eventsByDay<Type extends string>(
    organizationId: string,
    types: readonly Type[],
    filters: StatsFilters,
  ): Promise<EventsOnDay<Type>[]>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** A UTC day number (days since 1970-01-01) as `YYYY-MM-DD`. */
const dateOfDayNumber = (day: number | string) => utcDay(Number(day) * DAY_MS);

export class ClickHouseOutboundStatsReader implements OutboundStatsReader {
  constructor(private readonly queries: ActivityQueries) {}

  async sentByDay(organizationId: string, filters: StatsFilters): Promise<SentOnDay[]> {
    const where = [`organization_id = ${sqlString(organizationId)}`];
    if (filters.tag) where.push(`tag = ${sqlString(filters.tag)}`);
    // A message is sent on or after the day it was received: its partition day is no later than the last day asked.
    if (filters.toDate !== undefined) where.push(`day <= ${sqlString(utcDay(filters.toDate))}`);
    const sentWhere = ['sent_ms > 0'];
    if (filters.fromDate !== undefined) sentWhere.push(`sent_ms >= ${sqlNumber(filters.fromDate)}`);
    if (filters.toDate !== undefined) sentWhere.push(`sent_ms <= ${sqlNumber(filters.toDate)}`);
    // The time a message was first sent is set once and kept by every later version: max over its rows is it.
    const rows = await this.queries.query<{ day_number: string; sent: string }>(
      `SELECT intDiv(sent_ms, ${DAY_MS}) AS day_number, count() AS sent FROM (` +
        `SELECT message_id, max(sent_at_ms) AS sent_ms FROM ${this.queries.db}.messages ` +
        `WHERE ${where.join(' AND ')} GROUP BY message_id) ` +
        `WHERE ${sentWhere.join(' AND ')} GROUP BY day_number ORDER BY day_number`,
      this.queries.deadline(),
    );
    return rows.map((row) => ({ date: dateOfDayNumber(row.day_number), sent: Number(row.sent) }));
  }

  bouncesByDay(organizationId: string, filters: StatsFilters): Promise<BouncesOnDay[]> {
    return this.eventsByDay(organizationId, BOUNCE_KINDS, filters);
  }

  async eventsByDay<Type extends string>(
    organizationId: string,
    types: readonly Type[],
    filters: StatsFilters,
  ): Promise<EventsOnDay<Type>[]> {
    const where = [`organization_id = ${sqlString(organizationId)}`, `type IN (${types.map(sqlString).join(', ')})`];
    if (filters.tag) where.push(`tag = ${sqlString(filters.tag)}`);
    if (filters.toDate !== undefined) where.push(`day <= ${sqlString(utcDay(filters.toDate))}`);
    const having: string[] = [];
    if (filters.fromDate !== undefined) having.push(`first_ms >= ${sqlNumber(filters.fromDate)}`);
    if (filters.toDate !== undefined) having.push(`first_ms <= ${sqlNumber(filters.toDate)}`);
    // Each event once, at its first time (an outcome decided again has the same event id and a later time).
    const rows = await this.queries.query<{ day_number: string; kind: Type; events: string }>(
      `SELECT intDiv(first_ms, ${DAY_MS}) AS day_number, kind, count() AS events FROM (` +
        `SELECT event_id, any(type) AS kind, min(occurred_at_ms) AS first_ms ` +
        `FROM ${this.queries.db}.message_events FINAL WHERE ${where.join(' AND ')} GROUP BY event_id` +
        (having.length > 0 ? ` HAVING ${having.join(' AND ')}` : '') +
        `) GROUP BY day_number, kind ORDER BY day_number`,
      this.queries.deadline(),
    );
    const days = new Map<string, EventsOnDay<Type>>();
    for (const row of rows) {
      const date = dateOfDayNumber(row.day_number);
      let day = days.get(date);
      if (!day) {
        day = { date, counts: Object.fromEntries(types.map((kind) => [kind, 0])) as Record<Type, number> };
        days.set(date, day);
      }
      day.counts[row.kind] += Number(row.events);
    }
    return [...days.values()];
  }
}
