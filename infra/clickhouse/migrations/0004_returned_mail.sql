-- Mail that comes back after the SMTP conversation (a DSN, a spam complaint, an automatic reply): which received
-- mail reported an event, and a complaint's reporting software. Empty for every event before, and for an answer
-- during the conversation.
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: one column per statement, and `migrate` counts a column that a
-- run stopped halfway already added as added.
ALTER TABLE {db}.message_events ADD COLUMN report_id String DEFAULT '' AFTER next_attempt_at_ms;
ALTER TABLE {db}.message_events ADD COLUMN user_agent String DEFAULT '' AFTER report_id;
