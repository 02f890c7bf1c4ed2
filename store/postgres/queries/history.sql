-- History: conversations filed in folders, archived, deleted (hidden).
--
-- The search walks the reader's conversations (conversations_workspace_idx
-- for a person's workspaces) and, for a query, probes each one's entries
-- through the (conversation_id, seq) key with strpos() on the user and
-- assistant entries' text: a substring match, bounded by the conversations
-- the reader sees rather than by the size of the whole log.

-- name: ConversationSearch :many
-- Last activity first (SortActivity, the list's default): the order of
-- conversations_updated_idx, so the scan walks the index from the newest
-- and stops once the page is full, and the platform is looked up for the
-- page's rows only. Its time is the page's, not the table's. What the
-- filing hides (deleted, and archived unless asked for) is an anti-join,
-- not a filter on the outer join's columns: the planner estimates
-- "f.archived_at IS NULL" from the filing rows alone (mostly archived ones)
-- as if nearly no conversation passed, and then sorts them all.
SELECT sqlc.embed(c),
       f.folder_id AS folder_id, f.archived_at AS archived_at,
       COALESCE((SELECT b.platform FROM bindings b WHERE b.conversation_id = c.id ORDER BY b.created_at, b.id LIMIT 1), '')::text AS platform
FROM conversations c
LEFT JOIN conversation_filing f ON f.conversation_id = c.id
WHERE NOT EXISTS (SELECT 1 FROM conversation_filing h
                  WHERE h.conversation_id = c.id
                    AND (h.deleted_at IS NOT NULL OR (h.archived_at IS NOT NULL AND @archived_mode::int = 0)))
  AND (@archived_mode::int <> 1 OR f.archived_at IS NOT NULL)
  AND (@all_workspaces::bool OR c.workspace_id = ANY (CAST(@workspaces::text[] AS uuid[])))
  AND (sqlc.narg(agent_id)::uuid IS NULL OR c.agent_id = sqlc.narg(agent_id)::uuid)
  AND (@platform::text = ''
       OR (@platform::text = 'api' AND NOT EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id))
       OR EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id AND b.platform = @platform::text))
  AND (sqlc.narg(folder_id)::uuid IS NULL OR f.folder_id = sqlc.narg(folder_id)::uuid)
  AND (NOT @unfiled::bool OR f.folder_id IS NULL)
  AND (@needle::text = ''
       OR strpos(lower(c.title), @needle::text) > 0
       OR EXISTS (SELECT 1 FROM entries e
                  WHERE e.conversation_id = c.id AND e.seq IS NOT NULL AND e.kind IN ('user', 'assistant')
                    AND strpos(lower(e.content::text), @needle::text) > 0))
ORDER BY c.updated_at DESC, c.id DESC
LIMIT @max_rows::int OFFSET @skip::int;

-- name: ConversationSearchSorted :many
-- By title or newest first (SortTitle, SortCreated): no index has these
-- orders, so every conversation the reader sees is sorted.
SELECT sqlc.embed(c),
       f.folder_id AS folder_id, f.archived_at AS archived_at,
       COALESCE((SELECT b.platform FROM bindings b WHERE b.conversation_id = c.id ORDER BY b.created_at, b.id LIMIT 1), '')::text AS platform
FROM conversations c
LEFT JOIN conversation_filing f ON f.conversation_id = c.id
WHERE f.deleted_at IS NULL
  AND (@all_workspaces::bool OR c.workspace_id = ANY (CAST(@workspaces::text[] AS uuid[])))
  AND (sqlc.narg(agent_id)::uuid IS NULL OR c.agent_id = sqlc.narg(agent_id)::uuid)
  AND (@platform::text = ''
       OR (@platform::text = 'api' AND NOT EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id))
       OR EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id AND b.platform = @platform::text))
  AND (sqlc.narg(folder_id)::uuid IS NULL OR f.folder_id = sqlc.narg(folder_id)::uuid)
  AND (NOT @unfiled::bool OR f.folder_id IS NULL)
  AND (@archived_mode::int = 2 OR (f.archived_at IS NOT NULL) = (@archived_mode::int = 1))
  AND (@needle::text = ''
       OR strpos(lower(c.title), @needle::text) > 0
       OR EXISTS (SELECT 1 FROM entries e
                  WHERE e.conversation_id = c.id AND e.seq IS NOT NULL AND e.kind IN ('user', 'assistant')
                    AND strpos(lower(e.content::text), @needle::text) > 0))
ORDER BY
  CASE WHEN @sort::text = 'title' THEN lower(c.title) END,
  CASE WHEN @sort::text = 'created' THEN c.created_at END DESC,
  c.updated_at DESC, c.id DESC
LIMIT @max_rows::int OFFSET @skip::int;

-- name: ConversationListingGet :one
SELECT sqlc.embed(c),
       f.folder_id AS folder_id, f.archived_at AS archived_at,
       COALESCE((SELECT b.platform FROM bindings b WHERE b.conversation_id = c.id ORDER BY b.created_at, b.id LIMIT 1), '')::text AS platform
FROM conversations c
LEFT JOIN conversation_filing f ON f.conversation_id = c.id
WHERE c.id = @id AND f.deleted_at IS NULL;

-- name: ConversationListingLock :one
-- The conversation's row locked for a filing change (a delete and a move
-- of the same conversation take turns).
SELECT id, parent_id, workspace_id FROM conversations WHERE id = @id FOR UPDATE;

-- name: FilingGet :one
SELECT * FROM conversation_filing WHERE conversation_id = @conversation_id;

-- name: FilingPut :exec
INSERT INTO conversation_filing (conversation_id, folder_id, archived_at, deleted_at, updated_at)
VALUES (@conversation_id, sqlc.narg(folder_id)::uuid, sqlc.narg(archived_at)::timestamptz, sqlc.narg(deleted_at)::timestamptz, @now::timestamptz)
ON CONFLICT (conversation_id) DO UPDATE SET
    folder_id = excluded.folder_id, archived_at = excluded.archived_at,
    deleted_at = excluded.deleted_at, updated_at = excluded.updated_at;

-- name: ConversationRename :execrows
UPDATE conversations SET title = @title, title_auto = false WHERE id = @id;

-- name: ConversationChildGone :exec
UPDATE conversations SET child_count = child_count - 1
WHERE id = @id AND child_count > 0;

-- name: FolderInsert :one
INSERT INTO folders (id, workspace_id, name, color, created_at, updated_at)
VALUES (@id, sqlc.narg(workspace_id)::uuid, @name, @color, @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: FolderGet :one
SELECT * FROM folders WHERE id = @id;

-- name: FolderList :many
SELECT * FROM folders
WHERE @all_workspaces::bool OR workspace_id = ANY (CAST(@workspaces::text[] AS uuid[]))
ORDER BY lower(name), id;

-- name: FolderUpdate :one
UPDATE folders SET name = COALESCE(sqlc.narg(name)::text, name), color = COALESCE(sqlc.narg(color)::text, color),
    updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;

-- name: FolderUnfileAll :exec
UPDATE conversation_filing SET folder_id = NULL WHERE folder_id = @folder_id;

-- name: FolderDelete :execrows
DELETE FROM folders WHERE id = @id;

-- name: AgentNameGet :one
SELECT name FROM agents WHERE id = @id;
