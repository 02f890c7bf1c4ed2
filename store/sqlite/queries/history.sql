-- History: conversations filed in folders, archived, deleted (hidden).
--
-- The search walks the reader's conversations (conversations_workspace_idx
-- for a person's workspaces) and, for a query, probes each one's entries
-- through the (conversation_id, seq) key with instr() on the user
-- and assistant entries' text: a substring match, bounded by the conversations the
-- reader sees rather than by the size of the whole log.

-- name: ConversationSearch :many
-- Last activity first (SortActivity, the list's default): the order of
-- conversations_updated_idx, so the scan walks the index from the newest
-- and stops once the page is full, and the platform is looked up for the
-- page's rows only. Its time is the page's, not the table's.
SELECT sqlc.embed(c),
       f.folder_id AS folder_id, f.archived_at AS archived_at,
       CAST(COALESCE((SELECT b.platform FROM bindings b WHERE b.conversation_id = c.id ORDER BY b.created_at, b.id LIMIT 1), '') AS TEXT) AS platform
FROM conversations c
LEFT JOIN conversation_filing f ON f.conversation_id = c.id
WHERE f.deleted_at IS NULL
  AND (CAST(sqlc.arg(all_workspaces) AS INTEGER) = 1
       OR c.workspace_id IN (SELECT value FROM json_each(CAST(sqlc.arg(workspaces) AS TEXT))))
  AND (sqlc.narg(agent_id) IS NULL OR c.agent_id = sqlc.narg(agent_id))
  AND (CAST(sqlc.arg(platform) AS TEXT) = ''
       OR (CAST(sqlc.arg(platform) AS TEXT) = 'api' AND NOT EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id))
       OR EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id AND b.platform = CAST(sqlc.arg(platform) AS TEXT)))
  AND (sqlc.narg(folder_id) IS NULL OR f.folder_id = sqlc.narg(folder_id))
  AND (CAST(sqlc.arg(unfiled) AS INTEGER) = 0 OR f.folder_id IS NULL)
  AND (CAST(sqlc.arg(archived_mode) AS INTEGER) = 2
       OR (f.archived_at IS NOT NULL) = (CAST(sqlc.arg(archived_mode) AS INTEGER) = 1))
  AND (CAST(sqlc.arg(needle) AS TEXT) = ''
       OR instr(lower(c.title), CAST(sqlc.arg(needle) AS TEXT)) > 0
       OR EXISTS (SELECT 1 FROM entries e
                  WHERE e.conversation_id = c.id AND e.seq IS NOT NULL AND e.kind IN ('user', 'assistant')
                    AND instr(lower(e.content), CAST(sqlc.arg(needle) AS TEXT)) > 0))
ORDER BY c.updated_at DESC, c.id DESC
LIMIT sqlc.arg(max_rows) OFFSET sqlc.arg(skip);

-- name: ConversationSearchSorted :many
-- By title or newest first (SortTitle, SortCreated): no index has these
-- orders, so every conversation the reader sees is sorted.
SELECT sqlc.embed(c),
       f.folder_id AS folder_id, f.archived_at AS archived_at,
       CAST(COALESCE((SELECT b.platform FROM bindings b WHERE b.conversation_id = c.id ORDER BY b.created_at, b.id LIMIT 1), '') AS TEXT) AS platform,
       -- The sort keys are columns: sqlc leaves parameters in ORDER BY unbound.
       CAST(CASE WHEN CAST(sqlc.arg(sort) AS TEXT) = 'title' THEN lower(c.title) ELSE '' END AS TEXT) AS title_key,
       CAST(CASE WHEN CAST(sqlc.arg(sort) AS TEXT) = 'created' THEN c.created_at ELSE 0 END AS INTEGER) AS created_key
FROM conversations c
LEFT JOIN conversation_filing f ON f.conversation_id = c.id
WHERE f.deleted_at IS NULL
  AND (CAST(sqlc.arg(all_workspaces) AS INTEGER) = 1
       OR c.workspace_id IN (SELECT value FROM json_each(CAST(sqlc.arg(workspaces) AS TEXT))))
  AND (sqlc.narg(agent_id) IS NULL OR c.agent_id = sqlc.narg(agent_id))
  AND (CAST(sqlc.arg(platform) AS TEXT) = ''
       OR (CAST(sqlc.arg(platform) AS TEXT) = 'api' AND NOT EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id))
       OR EXISTS (SELECT 1 FROM bindings b WHERE b.conversation_id = c.id AND b.platform = CAST(sqlc.arg(platform) AS TEXT)))
  AND (sqlc.narg(folder_id) IS NULL OR f.folder_id = sqlc.narg(folder_id))
  AND (CAST(sqlc.arg(unfiled) AS INTEGER) = 0 OR f.folder_id IS NULL)
  AND (CAST(sqlc.arg(archived_mode) AS INTEGER) = 2
       OR (f.archived_at IS NOT NULL) = (CAST(sqlc.arg(archived_mode) AS INTEGER) = 1))
  AND (CAST(sqlc.arg(needle) AS TEXT) = ''
       OR instr(lower(c.title), CAST(sqlc.arg(needle) AS TEXT)) > 0
       OR EXISTS (SELECT 1 FROM entries e
                  WHERE e.conversation_id = c.id AND e.seq IS NOT NULL AND e.kind IN ('user', 'assistant')
                    AND instr(lower(e.content), CAST(sqlc.arg(needle) AS TEXT)) > 0))
ORDER BY title_key, created_key DESC, c.updated_at DESC, c.id DESC
LIMIT sqlc.arg(max_rows) OFFSET sqlc.arg(skip);

-- name: ConversationListingGet :one
SELECT sqlc.embed(c),
       f.folder_id AS folder_id, f.archived_at AS archived_at,
       CAST(COALESCE((SELECT b.platform FROM bindings b WHERE b.conversation_id = c.id ORDER BY b.created_at, b.id LIMIT 1), '') AS TEXT) AS platform
FROM conversations c
LEFT JOIN conversation_filing f ON f.conversation_id = c.id
WHERE c.id = sqlc.arg(id) AND f.deleted_at IS NULL;

-- name: FilingGet :one
SELECT * FROM conversation_filing WHERE conversation_id = sqlc.arg(conversation_id);

-- name: FilingPut :exec
INSERT INTO conversation_filing (conversation_id, folder_id, archived_at, deleted_at, updated_at)
VALUES (sqlc.arg(conversation_id), sqlc.narg(folder_id), sqlc.narg(archived_at), sqlc.narg(deleted_at), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (conversation_id) DO UPDATE SET
    folder_id = excluded.folder_id, archived_at = excluded.archived_at,
    deleted_at = excluded.deleted_at, updated_at = excluded.updated_at;

-- name: ConversationRename :execrows
UPDATE conversations SET title = sqlc.arg(title), title_auto = 0 WHERE id = sqlc.arg(id);

-- name: ConversationChildGone :exec
UPDATE conversations SET child_count = child_count - 1
WHERE id = sqlc.arg(id) AND child_count > 0;

-- name: FolderInsert :one
INSERT INTO folders (id, workspace_id, name, color, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.narg(workspace_id), sqlc.arg(name), sqlc.arg(color), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: FolderGet :one
SELECT * FROM folders WHERE id = sqlc.arg(id);

-- name: FolderList :many
SELECT * FROM folders
WHERE CAST(sqlc.arg(all_workspaces) AS INTEGER) = 1
   OR workspace_id IN (SELECT value FROM json_each(CAST(sqlc.arg(workspaces) AS TEXT)))
ORDER BY lower(name), id;

-- name: FolderUpdate :one
UPDATE folders SET name = COALESCE(sqlc.narg(name), name), color = COALESCE(sqlc.narg(color), color),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: FolderUnfileAll :exec
UPDATE conversation_filing SET folder_id = NULL WHERE folder_id = sqlc.arg(folder_id);

-- name: FolderDelete :execrows
DELETE FROM folders WHERE id = sqlc.arg(id);

-- name: AgentNameGet :one
SELECT name FROM agents WHERE id = sqlc.arg(id);
