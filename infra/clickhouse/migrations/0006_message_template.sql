-- The template a message was rendered from (POST /email/withTemplate) and its version, shown in the message's
-- details; 0 for a plain send and for every message before.
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: one column per statement, and `migrate` counts a column that a
-- run stopped halfway already added as added.
ALTER TABLE {db}.messages ADD COLUMN template_id UInt32 DEFAULT 0 AFTER html_body;
ALTER TABLE {db}.messages ADD COLUMN template_version UInt32 DEFAULT 0 AFTER template_id;
