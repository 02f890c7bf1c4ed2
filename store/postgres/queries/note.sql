-- Notes and their full-text search (see migrations/postgres/0016_notes.sql).
-- A note is visible to a reader (agent, family, conversation, workspace)
-- when its scope says so; the searches below repeat that rule.

-- name: NoteInsert :one
INSERT INTO notes (
    id, agent, family, conversation_id, scope, text, tags, tags_text, pinned, workspace_id, created_at
) VALUES (
    @id, @agent, @family, sqlc.narg(conversation_id)::uuid, @scope, @text, @tags::text[], @tags_text, @pinned,
    sqlc.narg(workspace_id)::uuid, @now::timestamptz
)
RETURNING *;

-- name: NoteGet :one
SELECT * FROM notes WHERE id = @id;

-- name: NoteSearch :many
-- match is a tsquery of OR-ed terms (see store.SearchTerms); the best
-- match first (ts_rank), then the most relevant, then the newest.
SELECT sqlc.embed(n), ts_rank(n.search, to_tsquery('english', @match::text))::float8 AS rank
FROM notes n
WHERE n.archived_at IS NULL
  AND n.search @@ to_tsquery('english', @match::text)
  AND n.workspace_id IS NOT DISTINCT FROM sqlc.narg(workspace_id)::uuid
  AND ((@with_agent::boolean AND n.scope = 'agent' AND n.agent = @agent::text)
    OR (@with_family::boolean AND n.scope = 'family' AND n.family = @family::text)
    OR (@with_conversation::boolean AND n.scope = 'conversation' AND n.conversation_id = sqlc.narg(conversation_id)::uuid))
ORDER BY rank DESC, n.relevance DESC, n.id DESC
LIMIT @max_rows;

-- name: NoteListPinned :many
SELECT * FROM notes n
WHERE n.archived_at IS NULL AND n.pinned
  AND n.workspace_id IS NOT DISTINCT FROM sqlc.narg(workspace_id)::uuid
  AND ((n.scope = 'agent' AND n.agent = @agent::text)
    OR (n.scope = 'family' AND n.family = @family::text)
    OR (n.scope = 'conversation' AND n.conversation_id = sqlc.narg(conversation_id)::uuid))
ORDER BY n.id
LIMIT @max_rows;

-- name: NoteList :many
-- For upkeep and the conversation's own notes: every filter is optional
-- (empty or NULL), keyset-paged by id (UUIDv7, so in creation order).
SELECT * FROM notes
WHERE (@family::text = '' OR family = @family::text)
  AND (@agent::text = '' OR agent = @agent::text)
  AND (sqlc.narg(conversation_id)::uuid IS NULL OR conversation_id = sqlc.narg(conversation_id)::uuid)
  AND (@with_archived::boolean OR archived_at IS NULL)
  AND id > @after_id::uuid
ORDER BY id
LIMIT @max_rows;

-- name: NoteTouch :execrows
UPDATE notes
SET uses = uses + @uses::integer,
    last_used_at = GREATEST(COALESCE(last_used_at, @now::timestamptz), @now::timestamptz)
WHERE id = ANY(CAST(@ids::text[] AS uuid[]));

-- name: NoteRescore :execrows
UPDATE notes SET relevance = @relevance::float8 WHERE id = @id;

-- name: NoteArchive :many
-- Archives note id (keeping the time it was first archived) and, in the
-- same statement, links the note superseding it; both rows come back.
UPDATE notes SET
    archived_at = CASE WHEN id = @id::uuid THEN COALESCE(archived_at, @now::timestamptz) ELSE archived_at END,
    supersedes = CASE WHEN id = sqlc.narg(superseded_by)::uuid THEN @id::uuid ELSE supersedes END
WHERE id = @id::uuid OR id = sqlc.narg(superseded_by)::uuid
RETURNING *;

-- name: SummarySearch :many
-- The summaries of the agent's other conversations in the workspace that
-- contain any of the terms, the most terms first, then the newest. A plain
-- scan of the agent's summary entries: they are few per conversation.
SELECT e.id, e.conversation_id, e.created_at, (e.content->>'text')::text AS text,
       (SELECT count(*) FROM unnest(@terms::text[]) AS t(term)
        WHERE strpos(lower(e.content->>'text'), t.term) > 0)::integer AS hits
FROM conversations c
JOIN entries e ON e.conversation_id = c.id AND e.kind = 'summary'
WHERE c.agent_id = @agent_id
  AND c.id <> @exclude_conversation_id
  AND c.workspace_id IS NOT DISTINCT FROM sqlc.narg(workspace_id)::uuid
  AND EXISTS (SELECT 1 FROM unnest(@terms::text[]) AS t(term) WHERE strpos(lower(e.content->>'text'), t.term) > 0)
ORDER BY hits DESC, e.created_at DESC
LIMIT @max_rows;
