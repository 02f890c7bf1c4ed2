-- Skills: one row per (layer, scope, name).

-- name: SkillSave :one
-- A save replaces everything but created_at.
INSERT INTO skills AS s (layer, scope, name, description, front_matter, instructions, files, created_at, updated_at)
VALUES (@layer, @scope, @name, @description, @front_matter, @instructions, CAST(@files::text AS jsonb), @now::timestamptz, @now::timestamptz)
ON CONFLICT (layer, scope, name) DO UPDATE
SET (description, front_matter, instructions, files, updated_at)
  = (EXCLUDED.description, EXCLUDED.front_matter, EXCLUDED.instructions, EXCLUDED.files, EXCLUDED.updated_at)
RETURNING *;

-- name: SkillGet :one
SELECT * FROM skills WHERE layer = @layer AND scope = @scope AND name = @name;

-- name: SkillList :many
-- Every skill with @all_skills; otherwise what one agent may be offered.
SELECT * FROM skills
WHERE @all_skills::boolean
   OR layer = 'platform'
   OR (layer = 'owner' AND scope = @owner AND @owner <> '')
   OR (layer = 'agent' AND scope = @agent AND @agent <> '')
ORDER BY layer, scope, name;

-- name: SkillDelete :execrows
DELETE FROM skills WHERE layer = @layer AND scope = @scope AND name = @name;
