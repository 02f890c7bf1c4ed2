-- Voice usage: a transcription is priced by the seconds of audio heard, a
-- speech by the characters spoken, not by tokens. kind says which a row
-- is (model for a model call, as every row before this one). Expand only:
-- older binaries never read the new columns, and their inserts take the
-- defaults.

ALTER TABLE usage_records ADD COLUMN kind text NOT NULL DEFAULT 'model'
    CHECK (kind IN ('model', 'transcription', 'speech'));
ALTER TABLE usage_records ADD COLUMN audio_ms bigint NOT NULL DEFAULT 0 CHECK (audio_ms >= 0);
ALTER TABLE usage_records ADD COLUMN speech_chars bigint NOT NULL DEFAULT 0 CHECK (speech_chars >= 0);
