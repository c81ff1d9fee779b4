-- Time from accepted to delivered, by percentile.
-- For every delivered recipient: the time from the message's acceptance (the API's answer, receivedAt)
-- to the recipient's server answering 250 to DATA, in seconds. quantileExact(level) is the value at
-- position floor(level * n) of the n sorted times (0-based); retries of deferred deliveries are included.
-- Add `day` or `tag` to a GROUP BY to split it.
-- Run against the activity database, e.g. clickhouse-client --database sendline --queries-file queries/time_to_delivery_percentiles.sql
SELECT
    count() AS delivered,
    quantileExact(0.5)(seconds) AS p50_seconds,
    quantileExact(0.9)(seconds) AS p90_seconds,
    quantileExact(0.99)(seconds) AS p99_seconds,
    max(seconds) AS max_seconds
FROM
(
    SELECT (toInt64(occurred_at_ms) - toInt64(message_received_at_ms)) / 1000 AS seconds
    FROM message_events FINAL
    WHERE type = 'Delivered'
)
