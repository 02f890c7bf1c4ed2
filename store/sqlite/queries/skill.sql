-- Skills: one row per (layer, scope, name).

-- name: SkillSave :one
-- A save replaces everything but created_at.
INSERT INTO skills (
    layer, scope, name, description, front_matter, instructions, files, created_at, updated_at
) VALUES (
    sqlc.arg(layer), sqlc.arg(scope), sqlc.arg(name), sqlc.arg(description), sqlc.arg(front_matter),
    sqlc.arg(instructions), sqlc.arg(files), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER)
)
ON CONFLICT (layer, scope, name) DO UPDATE
SET description = excluded.description,
    front_matter = excluded.front_matter,
    instructions = excluded.instructions,
    files = excluded.files,
    updated_at = excluded.updated_at
RETURNING *;

-- name: SkillGet :one
SELECT * FROM skills WHERE layer = sqlc.arg(layer) AND scope = sqlc.arg(scope) AND name = sqlc.arg(name);

-- name: SkillList :many
-- Every skill with all; otherwise what one agent may be offered.
SELECT * FROM skills
WHERE CAST(sqlc.arg(all_skills) AS INTEGER) <> 0
   OR layer = 'platform'
   OR (layer = 'owner' AND scope = sqlc.arg(owner) AND sqlc.arg(owner) <> '')
   OR (layer = 'agent' AND scope = sqlc.arg(agent) AND sqlc.arg(agent) <> '')
ORDER BY layer, scope, name;

-- name: SkillDelete :execrows
DELETE FROM skills WHERE layer = sqlc.arg(layer) AND scope = sqlc.arg(scope) AND name = sqlc.arg(name);
