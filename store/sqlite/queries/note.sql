-- Notes and their full-text search (see migrations/sqlite/0016_notes.sql).
-- A note is visible to a reader (agent, family, conversation, workspace)
-- when its scope says so; the searches below repeat that rule.

-- name: NoteInsert :one
INSERT INTO notes (
    id, agent, family, conversation_id, scope, text, tags, tags_text, pinned, workspace_id, created_at
) VALUES (
    sqlc.arg(id), sqlc.arg(agent), sqlc.arg(family), sqlc.narg(conversation_id), sqlc.arg(scope), sqlc.arg(text),
    sqlc.arg(tags), sqlc.arg(tags_text), sqlc.arg(pinned), sqlc.narg(workspace_id), CAST(sqlc.arg(now) AS INTEGER)
)
RETURNING *;

-- name: NoteGet :one
SELECT * FROM notes WHERE id = sqlc.arg(id);

-- name: NoteSearch :many
-- match is an FTS5 query of OR-ed quoted terms (see store.SearchTerms);
-- the best match first (bm25: lower is better; the text weighs twice the
-- tags), then the most relevant, then the newest.
SELECT sqlc.embed(notes), CAST(bm25(notes_fts, 2.0, 1.0) AS REAL) AS score
FROM notes_fts
JOIN notes ON notes.rowid = notes_fts.rowid
WHERE notes_fts MATCH CAST(sqlc.arg(match) AS TEXT)
  AND notes.archived_at IS NULL
  AND notes.workspace_id IS sqlc.narg(workspace_id)
  AND ((CAST(sqlc.arg(with_agent) AS INTEGER) <> 0 AND notes.scope = 'agent' AND notes.agent = sqlc.arg(agent))
    OR (CAST(sqlc.arg(with_family) AS INTEGER) <> 0 AND notes.scope = 'family' AND notes.family = sqlc.arg(family))
    OR (CAST(sqlc.arg(with_conversation) AS INTEGER) <> 0 AND notes.scope = 'conversation' AND notes.conversation_id = sqlc.narg(conversation_id)))
ORDER BY score, notes.relevance DESC, notes.id DESC
LIMIT sqlc.arg(max_rows);

-- name: NoteListPinned :many
SELECT * FROM notes
WHERE archived_at IS NULL AND pinned <> 0
  AND workspace_id IS sqlc.narg(workspace_id)
  AND ((scope = 'agent' AND agent = sqlc.arg(agent))
    OR (scope = 'family' AND family = sqlc.arg(family))
    OR (scope = 'conversation' AND conversation_id = sqlc.narg(conversation_id)))
ORDER BY id
LIMIT sqlc.arg(max_rows);

-- name: NoteList :many
-- For upkeep and the conversation's own notes: every filter is optional
-- (empty or NULL), keyset-paged by id (UUIDv7, so in creation order).
SELECT * FROM notes
WHERE (CAST(sqlc.arg(family) AS TEXT) = '' OR family = sqlc.arg(family))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR agent = sqlc.arg(agent))
  AND (CAST(sqlc.narg(conversation_id) AS TEXT) IS NULL OR conversation_id = sqlc.narg(conversation_id))
  AND (CAST(sqlc.arg(with_archived) AS INTEGER) <> 0 OR archived_at IS NULL)
  AND id > sqlc.arg(after_id)
ORDER BY id
LIMIT sqlc.arg(max_rows);

-- name: NoteTouch :execrows
UPDATE notes
SET uses = uses + CAST(sqlc.arg(uses) AS INTEGER),
    last_used_at = MAX(COALESCE(last_used_at, CAST(sqlc.arg(now) AS INTEGER)), CAST(sqlc.arg(now) AS INTEGER))
WHERE id IN (SELECT value FROM json_each(CAST(sqlc.arg(ids) AS TEXT)));

-- name: NoteRescore :execrows
UPDATE notes SET relevance = CAST(sqlc.arg(relevance) AS REAL) WHERE id = sqlc.arg(id);

-- name: NoteArchive :many
-- Archives note id (keeping the time it was first archived) and, in the
-- same statement, links the note superseding it; both rows come back.
UPDATE notes SET
    archived_at = CASE WHEN id = sqlc.arg(id) THEN COALESCE(archived_at, CAST(sqlc.arg(now) AS INTEGER)) ELSE archived_at END,
    supersedes = CASE WHEN id = sqlc.narg(superseded_by) THEN sqlc.arg(id) ELSE supersedes END
WHERE id = sqlc.arg(id) OR id = sqlc.narg(superseded_by)
RETURNING *;

-- name: SummarySearch :many
-- The summaries of the agent's other conversations in the workspace that
-- contain any of the terms (a JSON array), the most terms first, then the
-- newest. A plain scan of the agent's summary entries: they are few per
-- conversation.
SELECT e.id, e.conversation_id, e.created_at, CAST(COALESCE(json_extract(e.content, '$.text'), '') AS TEXT) AS text,
       CAST((SELECT count(*) FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) AS t
             WHERE instr(lower(json_extract(e.content, '$.text')), t.value) > 0) AS INTEGER) AS hits
FROM conversations c
JOIN entries e ON e.conversation_id = c.id AND e.kind = 'summary'
WHERE c.agent_id = sqlc.arg(agent_id)
  AND c.id <> sqlc.arg(exclude_conversation_id)
  AND c.workspace_id IS sqlc.narg(workspace_id)
  AND EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) AS t
              WHERE instr(lower(json_extract(e.content, '$.text')), t.value) > 0)
ORDER BY hits DESC, e.created_at DESC
LIMIT sqlc.arg(max_rows);
