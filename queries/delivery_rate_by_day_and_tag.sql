-- Delivery rate by day and tag.
-- Per UTC day (the day the message was accepted) and tag: recipients the messages went to, how many were
-- delivered, bounced (hard or soft), rejected by policy, or are still on their way (queued or deferred),
-- and the delivery rate: delivered / recipients with a final outcome (0 when none has one yet).
-- Run against the activity database, e.g. clickhouse-client --database sendline --queries-file queries/delivery_rate_by_day_and_tag.sql
SELECT
    day,
    tag,
    sum(length(recipients)) AS recipients,
    sum(arrayCount(s -> s = 'Delivered', recipient_statuses)) AS delivered,
    sum(arrayCount(s -> s = 'HardBounced' OR s = 'SoftBounced', recipient_statuses)) AS bounced,
    sum(arrayCount(s -> s = 'PolicyRejected', recipient_statuses)) AS rejected,
    sum(arrayCount(s -> s = 'Queued' OR s = 'Deferred', recipient_statuses)) AS in_flight,
    if(delivered + bounced + rejected = 0, 0, round(delivered / (delivered + bounced + rejected), 4)) AS delivery_rate
FROM messages FINAL
GROUP BY day, tag
ORDER BY day, tag
