-- The envelope sender (MAIL FROM, b.<token>@<return path domain>) each recipient's
-- attempt was made with: its Return-Path, recorded on the outcome events (Delivered,
-- Deferred, HardBounced, SoftBounced, PolicyRejected) and shown in a message's
-- details. Empty for Accepted and Sent, and for outcomes recorded before it was.
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: run again, the statement fails
-- with "column already exists", which the migration runner takes as done.
ALTER TABLE {db}.message_events ADD COLUMN return_path String;
