-- The conversation log. Every query returning an entry returns the whole row
-- (dbsqlc.Entry), but the hot append, which returns its seq.

-- name: EntryAppendNext :one
-- The hot path, one statement: take the next seq under the conversation's
-- row lock and insert the entry there. Concurrent appenders queue on the row
-- lock and each re-reads last_seq once it is theirs, so seq has no gaps and no
-- duplicates. With expect_seq set the append only happens when it is the next
-- seq; with lease_owner set only while lease_owner holds the conversation's
-- live lease (checked on the row version the lock gives us, so a takeover
-- that committed first wins). No row back means the conversation is missing,
-- expect_seq is not next, or the lease is not lease_owner's ('': unfenced).
-- A title is taken only by a conversation that has none (a rename's stays),
-- and is then automatic (title_auto).
-- Only the seq comes back: the caller has every other field of the entry,
-- and the row it would send back costs the server and the client more than
-- the seq. With it comes the id of the transaction the insert made it take
-- (as TxID reads it), so that a transaction that appended need not read it
-- again before its COMMIT (see tryTx).
WITH c AS (
    UPDATE conversations
    SET last_seq = last_seq + 1, updated_at = @now::timestamptz,
        title = CASE WHEN title = '' THEN @title::text ELSE title END,
        title_auto = CASE WHEN title = '' THEN @title::text <> '' ELSE title_auto END
    WHERE conversations.id = @conversation_id
      AND (sqlc.narg(expect_seq)::bigint IS NULL OR last_seq + 1 = sqlc.narg(expect_seq)::bigint)
      AND (@lease_owner::text = '' OR (lease_owner = @lease_owner::text AND lease_expires_at > @now::timestamptz))
    RETURNING conversations.id, last_seq
)
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                     turn_id, created_at)
SELECT @id, c.id, c.last_seq, c.last_seq - 1, @kind, @author, @content, @turn_id, @now::timestamptz
FROM c
RETURNING seq, COALESCE(txid_current_if_assigned(), 0)::bigint AS xid;

-- name: EntryAppendError :one
-- An error entry: no seq, placed after the current end of the log. Fenced by
-- lease_owner like EntryAppendNext; FOR SHARE waits for a takeover in flight
-- and re-checks the lease on the row it committed.
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                     turn_id, created_at)
SELECT @id, c.id, NULL, c.last_seq, 'error', @author, @content, @turn_id, @now::timestamptz
FROM conversations c
WHERE c.id = @conversation_id
  AND (@lease_owner::text = '' OR (c.lease_owner = @lease_owner::text AND c.lease_expires_at > @now::timestamptz))
FOR SHARE
RETURNING *;

-- name: EntryLockConversation :one
-- Serialises a slow-path append (ExpectSeq taken) with every other append,
-- and reads the lease the append may be fenced by.
SELECT last_seq, lease_owner, lease_expires_at FROM conversations WHERE id = @id FOR UPDATE;

-- name: EntryFork :one
-- Called with the parent locked (EntryLockConversation) and fork_seq <= its
-- last_seq: creates the fork, seeds it with the parent's entries before
-- fork_seq (error entries stay with the parent), counts the child and lands
-- the entry at fork_seq in the fork. The fork keeps the parent's title
-- unless the parent has none, or retitle is set (an edit of the first
-- message) and the parent's title is automatic: then it takes title, which
-- is automatic in turn. A renamed title is never replaced.
WITH at AS (
    SELECT @fork_seq::bigint AS fork_seq
), parent AS (
    UPDATE conversations
    SET child_count = child_count + 1, updated_at = @now::timestamptz
    WHERE conversations.id = @parent_id
    RETURNING conversations.id, root_id, agent_id, title, title_auto, provider, model, thinking, metadata
), own AS (
    -- Whether the fork takes title in place of its parent's.
    SELECT @title::text <> '' AND (p.title = '' OR (@retitle::boolean AND p.title_auto)) AS takes
    FROM parent p
), fork AS (
    INSERT INTO conversations (id, parent_id, root_id, fork_seq, agent_id, title, title_auto,
                               provider, model, thinking, metadata, last_seq,
                               created_at, updated_at)
    SELECT @fork_id, p.id, p.root_id, x.fork_seq, p.agent_id,
           CASE WHEN o.takes THEN @title::text ELSE p.title END,
           CASE WHEN o.takes THEN true ELSE p.title_auto END, p.provider,
           p.model, p.thinking, p.metadata, x.fork_seq, @now::timestamptz, @now::timestamptz
    FROM parent p, at x, own o
    RETURNING conversations.id
), seeded AS (
    INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                         turn_id, created_at)
    SELECT gen_random_uuid(), f.id, e.seq, e.after_seq, e.kind, e.author, e.content,
           e.turn_id, e.created_at
    FROM entries e, fork f, at x
    WHERE e.conversation_id = @parent_id AND e.seq < x.fork_seq
), rulebook AS (
    -- A fork starts with its parent's rulebook.
    INSERT INTO conversation_rulebooks (conversation_id, text, set_by, updated_at)
    SELECT f.id, r.text, r.set_by, r.updated_at
    FROM conversation_rulebooks r, fork f
    WHERE r.conversation_id = @parent_id
)
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                     turn_id, created_at)
SELECT @id, f.id, x.fork_seq, x.fork_seq - 1, @kind, @author, @content, @turn_id, @now::timestamptz
FROM fork f, at x
RETURNING *;

-- name: EntryGet :one
SELECT * FROM entries WHERE id = @id;

-- name: EntryList :many
-- The read that builds a model's context and resumes a stream: no errors.
-- after_seq is exclusive, up_to_seq 0 means no bound, max_rows 0 no limit.
SELECT * FROM entries
WHERE conversation_id = @conversation_id
  AND seq > @after_seq::bigint
  AND (@up_to_seq::bigint = 0 OR seq <= @up_to_seq::bigint)
ORDER BY seq
LIMIT NULLIF(@max_rows::integer, 0);

-- name: EntryScan :many
-- The entries with a seq of a display read as a stream writes them out
-- (EntryScan): only the columns it sends, handed over unscanned. after_seq
-- is exclusive, up_to_seq 0 means no bound, max_rows 0 no limit.
SELECT seq, id, kind, author, created_at, content FROM entries
WHERE conversation_id = @conversation_id
  AND seq > @after_seq::bigint
  AND (@up_to_seq::bigint = 0 OR seq <= @up_to_seq::bigint)
ORDER BY seq
LIMIT NULLIF(@max_rows::integer, 0);

-- name: EntryErrorList :many
-- The error entries (seq NULL) of the display read, placed after seq
-- after_seq up to up_to_seq (0: no bound), in display order: by the seq they
-- follow, then as written. EntryList (the entries with a seq) and this read
-- each walk an index in order and the driver merges them, so a long
-- catch-up is never one sort of the whole log.
SELECT * FROM entries
WHERE conversation_id = @conversation_id
  AND seq IS NULL
  AND after_seq >= @after_seq::bigint
  AND (@up_to_seq::bigint = 0 OR after_seq <= @up_to_seq::bigint)
ORDER BY after_seq, created_at, id
LIMIT NULLIF(@max_rows::integer, 0);

-- name: EntryListInChannel :many
-- A channel's newest messages, people's and agents', over every
-- conversation bound to it (its threads), newest first.
SELECT e.* FROM entries e
JOIN bindings b ON b.conversation_id = e.conversation_id
WHERE b.platform = @platform AND b.workspace = @workspace AND b.channel = @channel
  AND e.kind IN ('user', 'assistant')
ORDER BY e.created_at DESC, e.id DESC
LIMIT @max_rows::integer;
