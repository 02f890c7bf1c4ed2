-- The append-only log.

-- name: EntryInsert :exec
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at)
VALUES (sqlc.arg(id), sqlc.arg(conversation_id), sqlc.narg(seq), CAST(sqlc.arg(after_seq) AS INTEGER), sqlc.arg(kind),
        sqlc.arg(author), sqlc.arg(content), sqlc.narg(turn_id), sqlc.arg(created_at));

-- name: EntrySeedFork :execrows
-- Copies the parent's entries before seq into the fork, keeping seq,
-- after_seq and created_at. ids is a JSON array of fresh ids, one per copied
-- entry: the log has no gaps, so the id at index k goes to seq k+1 and each
-- copy is one index lookup (CROSS JOIN keeps ids as the outer loop; SQLite
-- would otherwise scan the whole array once per entry).
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at)
SELECT ids.value, sqlc.arg(fork_id), e.seq, e.after_seq, e.kind, e.author, e.content, e.turn_id, e.created_at
FROM json_each(CAST(sqlc.arg(ids) AS TEXT)) AS ids
CROSS JOIN entries AS e ON e.conversation_id = sqlc.arg(parent_id) AND e.seq = ids.key + 1
WHERE e.seq < CAST(sqlc.arg(seq) AS INTEGER);

-- name: EntryGet :one
SELECT * FROM entries WHERE id = sqlc.arg(id);

-- name: EntryList :many
-- The model's view: only entries with a seq. up_to 0 means no upper bound,
-- limit -1 no limit. Every column but conversation_id, which the caller
-- has: a catch-up reads thousands of rows, and each column of each row is
-- a few calls into SQLite.
SELECT id, seq, after_seq, kind, author, content, turn_id, created_at FROM entries
WHERE conversation_id = sqlc.arg(conversation_id)
  AND seq > CAST(sqlc.arg(after_seq) AS INTEGER)
  AND (CAST(sqlc.arg(up_to) AS INTEGER) = 0 OR seq <= CAST(sqlc.arg(up_to) AS INTEGER))
ORDER BY seq
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: EntryScan :many
-- The entries with a seq of a display read as a stream writes them out
-- (EntryScan): only the columns it sends, read unscanned.
SELECT seq, id, kind, author, created_at, content FROM entries
WHERE conversation_id = sqlc.arg(conversation_id)
  AND seq > CAST(sqlc.arg(after_seq) AS INTEGER)
  AND (CAST(sqlc.arg(up_to) AS INTEGER) = 0 OR seq <= CAST(sqlc.arg(up_to) AS INTEGER))
ORDER BY seq
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: EntryErrorList :many
-- Error entries (seq NULL) placed after seq after_seq up to up_to (0: no
-- bound), in display order: by the seq they follow, then as written. The
-- partial index entries_errors_idx holds them in that order. The columns
-- of EntryList.
SELECT id, seq, after_seq, kind, author, content, turn_id, created_at FROM entries
WHERE conversation_id = sqlc.arg(conversation_id)
  AND seq IS NULL
  AND after_seq >= CAST(sqlc.arg(after_seq) AS INTEGER)
  AND (CAST(sqlc.arg(up_to) AS INTEGER) = 0 OR after_seq <= CAST(sqlc.arg(up_to) AS INTEGER))
ORDER BY after_seq, rowid
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: EntryListInChannel :many
-- A channel's newest messages, people's and agents', over every
-- conversation bound to it (its threads), newest first.
SELECT e.* FROM entries e
JOIN bindings b ON b.conversation_id = e.conversation_id
WHERE b.platform = sqlc.arg(platform) AND b.workspace = sqlc.arg(workspace) AND b.channel = sqlc.arg(channel)
  AND e.kind IN ('user', 'assistant')
ORDER BY e.created_at DESC, e.id DESC
LIMIT CAST(sqlc.arg(limit) AS INTEGER);
