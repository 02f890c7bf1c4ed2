-- The append-only log. Column order of every entry row returned here is the
-- one scanEntry expects.

-- name: EntryInsert
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at)
VALUES (:id, :conversation_id, :seq, :after_seq, :kind, :author, :content, :turn_id, :now);

-- name: EntrySeedFork
-- Copies the parent's entries before :seq into the fork, keeping seq,
-- after_seq and created_at. :ids is a JSON array of fresh ids, one per copied
-- entry: the log has no gaps, so the id at index k goes to seq k+1 and each
-- copy is one index lookup (CROSS JOIN keeps ids as the outer loop; SQLite
-- would otherwise scan the whole array once per entry).
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at)
SELECT ids.value, :fork_id, e.seq, e.after_seq, e.kind, e.author, e.content, e.turn_id, e.created_at
FROM json_each(:ids) AS ids
CROSS JOIN entries AS e ON e.conversation_id = :parent_id AND e.seq = ids.key + 1
WHERE e.seq < :seq;

-- name: EntryGet
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at
FROM entries
WHERE id = :id;

-- name: EntryList
-- The model's view: only entries with a seq. :up_to 0 means no upper bound,
-- :limit -1 no limit.
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at
FROM entries
WHERE conversation_id = :conversation_id
  AND seq > :after_seq
  AND (:up_to = 0 OR seq <= :up_to)
ORDER BY seq
LIMIT :limit;

-- name: EntryListWithErrors
-- The display view: error entries (seq NULL) sort right after the entry they
-- followed, in the order they were written.
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at
FROM entries
WHERE conversation_id = :conversation_id
  AND (
        (seq IS NOT NULL AND seq > :after_seq AND (:up_to = 0 OR seq <= :up_to))
     OR (seq IS NULL AND after_seq >= :after_seq AND (:up_to = 0 OR after_seq <= :up_to))
  )
ORDER BY COALESCE(seq, after_seq), seq IS NULL, rowid
LIMIT :limit;

-- name: EntryDiscardCopy
INSERT INTO discarded_entries (
    id, conversation_id, seq, after_seq, kind, author, content, turn_id,
    created_at, reason, discarded_at
)
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id,
    created_at, :reason, :now
FROM entries
WHERE conversation_id = :conversation_id AND seq > :after_seq;

-- name: EntryDiscardDelete
DELETE FROM entries WHERE conversation_id = :conversation_id AND seq > :after_seq;

-- name: EntryDiscardRewindBindings
-- A delivered cursor never points past the end of the log: after a discard
-- the seqs past after_seq will be taken by new entries, which must still be
-- delivered.
UPDATE bindings
SET delivered_seq = :after_seq, updated_at = :now
WHERE conversation_id = :conversation_id AND delivered_seq > :after_seq;

-- name: EntryListDiscarded
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id,
    created_at, reason, discarded_at
FROM discarded_entries
WHERE conversation_id = :conversation_id
ORDER BY discarded_at, seq, rowid;
