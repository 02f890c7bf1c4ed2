-- People, their platform identities and link codes.

-- name: PersonInsert :one
INSERT INTO people (id, display_name, time_zone, created_at, updated_at)
VALUES (@id, @display_name, @time_zone, @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: PersonIdentityInsert :exec
INSERT INTO person_identities (platform, workspace, user_id, person_id, created_at)
VALUES (@platform, @workspace, @user_id, @person_id, @now::timestamptz);

-- name: PersonByID :one
SELECT * FROM people WHERE id = @id;

-- name: PersonIdentityList :many
SELECT * FROM person_identities
WHERE person_id = @person_id
ORDER BY created_at, platform, workspace, user_id;

-- name: PersonIdentityOwner :one
SELECT person_id FROM person_identities
WHERE platform = @platform AND workspace = @workspace AND user_id = @user_id;

-- name: PersonProfileUpdate :one
-- An empty value keeps the stored one.
UPDATE people
SET display_name = COALESCE(NULLIF(@display_name::text, ''), display_name),
    time_zone = COALESCE(NULLIF(@time_zone::text, ''), time_zone),
    updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;

-- name: PersonIdentityTouch :execrows
UPDATE person_identities SET refreshed_at = @now::timestamptz
WHERE platform = @platform AND workspace = @workspace AND user_id = @user_id AND person_id = @person_id;

-- name: PersonMergeMark :execrows
-- Only a record not merged already (the driver checked the one kept).
UPDATE people SET merged_into = @keep::uuid, updated_at = @now::timestamptz
WHERE id = @drop AND merged_into IS NULL;

-- name: PersonMergeIdentities :execrows
UPDATE person_identities SET person_id = @keep::uuid WHERE person_id = @drop::uuid;

-- name: PersonLinkCodeForget :execrows
-- A new code replaces the person's earlier ones; expired codes go too.
DELETE FROM person_link_codes WHERE person_id = @person_id OR expires_at <= @now::timestamptz;

-- name: PersonLinkCodeInsert :one
INSERT INTO person_link_codes (code_hash, person_id, platform, expires_at, created_at)
VALUES (@code_hash, @person_id, @platform, @expires_at::timestamptz, @now::timestamptz)
RETURNING *;

-- name: PersonLinkCodeSpend :one
UPDATE person_link_codes SET used_at = @now::timestamptz
WHERE code_hash = @code_hash AND used_at IS NULL AND expires_at > @now::timestamptz
RETURNING *;

-- name: PersonLinkCodePrune :execrows
-- Codes expired before @before, used or not: a used code is refused by
-- its used_at until then, an expired one by its expiry.
DELETE FROM person_link_codes
WHERE code_hash IN (
    SELECT c.code_hash FROM person_link_codes c
    WHERE c.expires_at < @before::timestamptz
    LIMIT @max_rows);

-- Forgetting a person (PersonForget): their records go, and what names
-- them elsewhere is replaced. authors and user_ids are every name the
-- person wrote under (store.ForgetAuthors).

-- name: PersonMergedInto :many
SELECT id FROM people WHERE merged_into = @id ORDER BY id;

-- name: ForgetBumpContentRev :exec
-- The conversations whose entries ForgetEntries is about to rewrite: their
-- streams' caches of encoded entries are stale after it.
UPDATE conversations SET content_rev = content_rev + 1
WHERE id IN (SELECT DISTINCT conversation_id FROM entries WHERE author = ANY(@authors::text[]));

-- name: ForgetEntries :execrows
-- Their entries name the deleted user; with redact their text goes too.
-- jsonb_set with create_missing false replaces only the keys there are.
UPDATE entries SET author = @deleted_author::text,
    content = CASE
        WHEN json_typeof(content) <> 'object' THEN content
        WHEN @redact::boolean AND kind = 'user' THEN json_build_object('text', @redacted_text::text, 'redacted', true)
        WHEN @redact::boolean THEN (jsonb_set(jsonb_set(jsonb_set(jsonb_set(jsonb_set(
                (content::jsonb - 'files' - 'page_context'),
                '{text}', to_jsonb(@redacted_text::text), false),
                '{output}', to_jsonb(@redacted_text::text), false),
                '{user_id}', to_jsonb(@deleted_user_id::text), false),
                '{user_name}', to_jsonb(@deleted_user_name::text), false),
                '{decided_by}', to_jsonb(@deleted_author::text), false)
            || '{"redacted": true}'::jsonb)::json
        ELSE jsonb_set(jsonb_set(jsonb_set(content::jsonb,
                '{user_id}', to_jsonb(@deleted_user_id::text), false),
                '{user_name}', to_jsonb(@deleted_user_name::text), false),
                '{decided_by}', to_jsonb(@deleted_author::text), false)::json
    END
WHERE author = ANY(@authors::text[]);

-- name: ForgetDiscardedEntries :execrows
UPDATE discarded_entries SET author = @deleted_author::text,
    content = CASE
        WHEN json_typeof(content) <> 'object' THEN content
        WHEN @redact::boolean THEN json_build_object('text', @redacted_text::text, 'redacted', true)
        ELSE jsonb_set(jsonb_set(content::jsonb,
                '{user_id}', to_jsonb(@deleted_user_id::text), false),
                '{user_name}', to_jsonb(@deleted_user_name::text), false)::json
    END
WHERE author = ANY(@authors::text[]);

-- name: ForgetParticipants :exec
DELETE FROM participants WHERE author = ANY(@authors::text[]);

-- name: ForgetCardChoices :exec
UPDATE card_choices SET user_id = @deleted_user_id::text, user_name = @deleted_user_name::text
WHERE user_id = ANY(@user_ids::text[]);

-- name: ForgetApprovalDeciders :exec
UPDATE approvals SET decided_by = @deleted_author::text
WHERE decided_by = ANY(@authors::text[]) OR decided_by = ANY(@user_ids::text[]);

-- name: ForgetAuditDeciders :exec
UPDATE audit_records SET decided_by = @deleted_author::text
WHERE decided_by = ANY(@authors::text[]) OR decided_by = ANY(@user_ids::text[]);

-- name: ForgetGrants :execrows
DELETE FROM grants WHERE granted_by = ANY(@user_ids::text[]) OR granted_by = ANY(@authors::text[]);

-- name: ForgetPairings :execrows
DELETE FROM pairings WHERE platform = @platform AND user_id = @user_id;

-- name: ForgetRefusalNotices :exec
DELETE FROM refusal_notices WHERE platform = @platform AND user_id = @user_id;

-- name: ForgetAPIKeys :execrows
DELETE FROM api_keys WHERE person_id = @person_id;

-- name: ForgetLogins :execrows
DELETE FROM web_logins WHERE person_id = @person_id;

-- name: ForgetSSOGrants :exec
-- The workspace roles single sign-on gave them (their memberships go too).
DELETE FROM sso_grants WHERE person_id = @person_id;

-- name: ForgetConnections :execrows
DELETE FROM connections WHERE owner_kind = 'person' AND owner_id = @person_id;

-- name: ForgetPersonalNotes :execrows
-- Their personal memory: the notes of their personal workspace.
DELETE FROM notes WHERE workspace_id IN (
    SELECT id FROM workspaces WHERE kind = 'personal' AND owner_person_id = @person_id);

-- name: ForgetMemberships :execrows
-- The owner's membership stays with the workspace (it is never removed).
DELETE FROM workspace_members WHERE person_id = @person_id AND role <> 'owner';

-- name: ForgetLinkCodes :exec
DELETE FROM person_link_codes WHERE person_id = @person_id;

-- name: ForgetIdentities :execrows
DELETE FROM person_identities WHERE person_id = @person_id;

-- name: ForgetPerson :execrows
DELETE FROM people WHERE id = @id;
