-- The activity store: what the API's activity endpoints and analysts read.
-- Partitioned by the message's day (UTC) so the 30-day retention sweep drops whole
-- partitions; a message's events live in its message's day so they go together.
-- Written for Debian's ClickHouse 18.16 and current ones alike: no TTL, no
-- DateTime64, no LowCardinality; times are DateTime plus epoch milliseconds.

CREATE TABLE IF NOT EXISTS {db}.messages (
    organization_id String,
    message_id String,
    day Date,
    received_at DateTime,
    received_at_ms UInt64,
    from_email String,
    from_name String,
    subject String,
    tag String,
    message_stream String,
    to_json String,
    cc_json String,
    bcc_json String,
    reply_to String,
    recipients Array(String),
    suppressed_recipients Array(String),
    metadata_json String,
    headers_json String,
    attachment_names Array(String),
    text_body String,
    html_body String,
    track_opens UInt8,
    track_links String,
    size_bytes UInt64,
    version UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY day
ORDER BY (organization_id, received_at, message_id);

CREATE TABLE IF NOT EXISTS {db}.message_events (
    organization_id String,
    message_id String,
    day Date,
    event_id String,
    type String,
    recipient String,
    occurred_at DateTime,
    occurred_at_ms UInt64,
    message_received_at_ms UInt64,
    smtp_code UInt16,
    enhanced_status String,
    smtp_response String,
    destination_server String,
    attempt UInt16,
    details_json String
) ENGINE = ReplacingMergeTree()
PARTITION BY day
ORDER BY (organization_id, message_id, occurred_at_ms, event_id);
