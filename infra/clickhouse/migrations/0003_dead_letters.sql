-- Dead letters of the organizations' messages: the events of `email.messages` and
-- `email.delivery-retries` that a consumer (the sender, the webhooks dispatcher, a
-- projector) gave up on and set aside on the topic's dead-letter topic, one row per
-- dead-letter record, for the console's "recent problems". Keyed by the record's own
-- position, so a record read twice (a replay, a batch applied again) is one row.
-- Partitioned by the day it was set aside: the retention sweep drops it after 30 days,
-- as long as the dead-letter topics keep it.
CREATE TABLE IF NOT EXISTS {db}.dead_letters (
    organization_id String,
    day Date,
    dead_at_ms UInt64,
    dead_letter_topic String,
    dead_letter_partition UInt32,
    dead_letter_offset UInt64,
    source_topic String,
    consumer_group String,
    event_type String,
    event_id String,
    message_id String,
    subject String,
    error String,
    error_code String,
    attempts UInt16
) ENGINE = ReplacingMergeTree()
PARTITION BY day
ORDER BY (organization_id, dead_at_ms, dead_letter_topic, dead_letter_partition, dead_letter_offset);
