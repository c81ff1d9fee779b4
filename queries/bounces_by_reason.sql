-- Bounces by reason.
-- Every hard and soft bounce of the retained 30 days, grouped by kind, enhanced status code (RFC 3463,
-- e.g. 5.1.1) and the short reason the sender recorded ("Bad destination mailbox address", "Mailbox full",
-- ...): how many bounces, of how many distinct recipient addresses, in how many messages.
-- Run against the activity database, e.g. clickhouse-client --database sendline --queries-file queries/bounces_by_reason.sql
SELECT
    type AS bounce_type,
    enhanced_status,
    summary AS reason,
    count() AS bounces,
    uniqExact(recipient) AS recipients,
    uniqExact(message_id) AS messages
FROM message_events FINAL
WHERE type IN ('HardBounced', 'SoftBounced')
GROUP BY bounce_type, enhanced_status, reason
ORDER BY bounces DESC, bounce_type, enhanced_status, reason
