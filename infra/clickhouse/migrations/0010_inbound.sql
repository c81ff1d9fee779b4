-- Inbound messages (issue 35): mail for an organization's inbound address, as the inbound reader parsed it into
-- Postmark's inbound JSON (`payload`, as posted to the organization's InboundHookUrl). One row per message, written
-- from InboundMessageReceived (topic email.inbound); written twice it is one row. Partitioned by the day it was
-- received: the retention sweep drops it after 30 days, as the activity.
CREATE TABLE IF NOT EXISTS {db}.inbound_messages (
    organization_id String,
    day Date,
    received_at_ms UInt64,
    message_id String,
    received_id String,
    status String,
    blocked_reason String,
    from_address String,
    from_name String,
    to_addresses String,
    cc_addresses String,
    subject String,
    mailbox_hash String,
    tag String,
    original_recipient String,
    size_bytes UInt64,
    payload String
) ENGINE = ReplacingMergeTree()
PARTITION BY day
ORDER BY (organization_id, received_at_ms, message_id);

-- A blocked inbound message let through on request (InboundMessageBypassed): one row per message, by the day of the
-- bypass (dropped with it after 30 days, by then its message's row is gone too).
CREATE TABLE IF NOT EXISTS {db}.inbound_bypasses (
    organization_id String,
    day Date,
    bypassed_at_ms UInt64,
    message_id String
) ENGINE = ReplacingMergeTree()
PARTITION BY day
ORDER BY (organization_id, message_id);
