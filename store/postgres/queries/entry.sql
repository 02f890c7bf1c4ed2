-- The conversation log. Every query returning an entry lists the same
-- columns, which entryRow scans by name.

-- name: EntryAppendNext
-- The hot path, one statement: take the next seq under the conversation's
-- row lock and insert the entry there. Concurrent appenders queue on the row
-- lock and each re-reads last_seq once it is theirs, so seq has no gaps and no
-- duplicates. With $3 set the append only happens when $3 is the next seq;
-- with $9 set only while $9 holds the conversation's live lease (checked on
-- the row version the lock gives us, so a takeover that committed first
-- wins). No row back means the conversation is missing, $3 is not next, or
-- the lease is not $9's.
-- $1 entry id, $2 conversation_id, $3 expect_seq (NULL: next), $4 kind,
-- $5 author, $6 content, $7 turn_id, $8 now, $9 lease_owner ('': unfenced).
WITH c AS (
    UPDATE conversations
    SET last_seq = last_seq + 1, updated_at = $8
    WHERE id = $2 AND ($3::bigint IS NULL OR last_seq + 1 = $3::bigint)
      AND ($9::text = '' OR (lease_owner = $9::text AND lease_expires_at > $8))
    RETURNING id, last_seq
)
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                     turn_id, created_at)
SELECT $1, c.id, c.last_seq, c.last_seq - 1, $4, $5, $6, $7, $8
FROM c
RETURNING id, conversation_id, seq, after_seq, kind, author, content, turn_id,
          created_at;

-- name: EntryAppendError
-- An error entry: no seq, placed after the current end of the log. Fenced by
-- $7 like EntryAppendNext; FOR SHARE waits for a takeover in flight and
-- re-checks the lease on the row it committed.
-- $1 entry id, $2 conversation_id, $3 author, $4 content, $5 turn_id, $6 now,
-- $7 lease_owner ('': unfenced).
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                     turn_id, created_at)
SELECT $1, c.id, NULL, c.last_seq, 'error', $3, $4, $5, $6
FROM conversations c
WHERE c.id = $2
  AND ($7::text = '' OR (c.lease_owner = $7::text AND c.lease_expires_at > $6))
FOR SHARE
RETURNING id, conversation_id, seq, after_seq, kind, author, content, turn_id,
          created_at;

-- name: EntryLockConversation
-- Serialises a slow-path append (ExpectSeq taken) with every other append,
-- and reads the lease the append may be fenced by.
SELECT last_seq, lease_owner, lease_expires_at FROM conversations WHERE id = $1 FOR UPDATE;

-- name: EntryFork
-- Called with the parent locked (EntryLockConversation) and $4 <= its
-- last_seq: creates the fork, seeds it with the parent's entries before $4
-- (error entries stay with the parent), counts the child and lands the entry
-- at $4 in the fork.
-- $1 entry id, $2 parent id, $3 fork id, $4 fork seq, $5 kind, $6 author,
-- $7 content, $8 turn_id, $9 now.
WITH parent AS (
    UPDATE conversations
    SET child_count = child_count + 1, updated_at = $9
    WHERE id = $2
    RETURNING id, root_id, agent_id, title, provider, model, thinking, metadata
), fork AS (
    INSERT INTO conversations (id, parent_id, root_id, fork_seq, agent_id, title,
                               provider, model, thinking, metadata, last_seq,
                               created_at, updated_at)
    SELECT $3, p.id, p.root_id, $4::bigint, p.agent_id, p.title, p.provider,
           p.model, p.thinking, p.metadata, $4::bigint, $9, $9
    FROM parent p
    RETURNING id
), seeded AS (
    INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                         turn_id, created_at)
    SELECT gen_random_uuid(), f.id, e.seq, e.after_seq, e.kind, e.author, e.content,
           e.turn_id, e.created_at
    FROM entries e
    CROSS JOIN fork f
    WHERE e.conversation_id = $2 AND e.seq < $4::bigint
)
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                     turn_id, created_at)
SELECT $1, f.id, $4::bigint, $4::bigint - 1, $5, $6, $7, $8, $9
FROM fork f
RETURNING id, conversation_id, seq, after_seq, kind, author, content, turn_id,
          created_at;

-- name: EntryGet
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id,
       created_at
FROM entries
WHERE id = $1;

-- name: EntryList
-- The read that builds a model's context and resumes a stream: no errors.
-- $1 conversation_id, $2 after_seq (exclusive), $3 up_to_seq (0: no bound),
-- $4 limit (NULL: all).
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id,
       created_at
FROM entries
WHERE conversation_id = $1
  AND seq > $2
  AND ($3::bigint = 0 OR seq <= $3::bigint)
ORDER BY seq
LIMIT $4;

-- name: EntryListWithErrors
-- The display read: error entries sort right after the entry they followed.
-- Parameters as EntryList.
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id,
       created_at
FROM entries
WHERE conversation_id = $1
  AND ((seq > $2 AND ($3::bigint = 0 OR seq <= $3::bigint))
       OR (seq IS NULL AND after_seq >= $2
           AND ($3::bigint = 0 OR after_seq <= $3::bigint)))
ORDER BY COALESCE(seq, after_seq), seq IS NULL, created_at, id
LIMIT $4;

-- name: EntryDiscardRewind
-- Locks the conversation against appenders and rewinds last_seq, so the next
-- append lands at $2 + 1. Runs before EntryDiscardMove in one transaction.
-- $1 conversation_id, $2 after_seq, $3 now.
UPDATE conversations
SET last_seq = LEAST(last_seq, $2::bigint), updated_at = $3
WHERE id = $1
RETURNING last_seq;

-- name: EntryDiscardMove
-- $1 conversation_id, $2 after_seq, $3 reason, $4 now.
WITH moved AS (
    DELETE FROM entries
    WHERE conversation_id = $1 AND seq > $2
    RETURNING id, conversation_id, seq, after_seq, kind, author, content, turn_id,
              created_at
)
INSERT INTO discarded_entries (id, conversation_id, seq, after_seq, kind, author,
                               content, turn_id, created_at, reason, discarded_at)
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id,
       created_at, $3, $4
FROM moved;

-- name: EntryDiscardRewindBindings
-- $1 conversation_id, $2 after_seq, $3 now. A delivered cursor never points
-- past the end of the log: after a discard the seqs past $2 will be taken by
-- new entries, which must still be delivered.
UPDATE bindings
SET delivered_seq = $2::bigint, updated_at = $3
WHERE conversation_id = $1 AND delivered_seq > $2::bigint;

-- name: EntryListDiscarded
SELECT id, conversation_id, seq, after_seq, kind, author, content, turn_id,
       created_at, reason, discarded_at
FROM discarded_entries
WHERE conversation_id = $1
ORDER BY discarded_at, seq, id;
