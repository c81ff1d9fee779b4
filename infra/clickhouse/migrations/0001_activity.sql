-- The activity store: what the API's activity endpoints and analysts read
-- (docs/activity-store.md describes every column and how to query).
-- Partitioned by the message's day (UTC) so the 30-day retention sweep drops whole
-- partitions; a message's events live in its message's day so they go together.
-- Written for Debian's ClickHouse 18.16 and current ones alike: no TTL, no
-- DateTime64, no LowCardinality; times are DateTime plus epoch milliseconds.

-- One row per message with its latest state. A state change writes the whole row
-- again with a higher `version` (a measure of progress, see the docs); read it with
-- FINAL (or argMax by version) to see one row per message.
CREATE TABLE IF NOT EXISTS {db}.messages (
    organization_id String,
    message_id String,
    day Date,
    received_at DateTime,
    received_at_ms UInt64,
    status String,
    phase String,
    recipients Array(String),
    recipient_statuses Array(String),
    suppressed_recipients Array(String),
    from_email String,
    from_name String,
    subject String,
    tag String,
    message_stream String,
    to_json String,
    cc_json String,
    bcc_json String,
    reply_to String,
    metadata_json String,
    metadata_keys Array(String),
    metadata_values Array(String),
    headers_json String,
    attachment_names Array(String),
    text_body String,
    html_body String,
    track_opens UInt8,
    track_links String,
    size_bytes UInt64,
    sent_at_ms UInt64,
    completed_at_ms UInt64,
    updated_at_ms UInt64,
    version UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY day
ORDER BY (organization_id, received_at, message_id);

-- One row per message event (Accepted and Sent once per message, outcomes once per
-- recipient and attempt). An event written twice has the same sorting key and
-- collapses to one row: read with FINAL (or count distinct event_id).
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
    tag String,
    smtp_code UInt16,
    enhanced_status String,
    smtp_response String,
    destination_server String,
    summary String,
    reason String,
    attempt UInt16,
    next_attempt_at_ms UInt64,
    kafka_partition UInt32,
    kafka_offset UInt64
) ENGINE = ReplacingMergeTree()
PARTITION BY day
ORDER BY (organization_id, message_id, occurred_at_ms, event_id);

-- A row per replay that swapped rebuilt tables in: a running projector that sees a
-- new row drops the message rows it holds in memory (they came from the old tables).
CREATE TABLE IF NOT EXISTS {db}.activity_swaps (
    swapped_at DateTime,
    replay_id String
) ENGINE = MergeTree
ORDER BY swapped_at;
