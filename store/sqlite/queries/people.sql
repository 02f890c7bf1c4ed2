-- People, their platform identities and link codes (see the Postgres
-- driver's people.sql for what each query is for).

-- name: PeopleInsert :one
INSERT INTO people (id, display_name, time_zone, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(display_name), sqlc.arg(time_zone), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: IdentityInsert :exec
INSERT INTO person_identities (platform, workspace, user_id, person_id, created_at)
VALUES (sqlc.arg(platform), sqlc.arg(workspace), sqlc.arg(user_id), sqlc.arg(person_id), CAST(sqlc.arg(now) AS INTEGER));

-- name: PeopleGet :one
SELECT * FROM people WHERE id = sqlc.arg(id);

-- name: IdentitiesOf :many
SELECT * FROM person_identities WHERE person_id = sqlc.arg(person_id)
ORDER BY created_at, platform, workspace, user_id;

-- name: IdentityOwner :one
SELECT person_id FROM person_identities
WHERE platform = sqlc.arg(platform) AND workspace = sqlc.arg(workspace) AND user_id = sqlc.arg(user_id);

-- name: PeopleSetProfile :one
UPDATE people
SET display_name = CASE WHEN CAST(sqlc.arg(display_name) AS TEXT) = '' THEN display_name ELSE CAST(sqlc.arg(display_name) AS TEXT) END,
    time_zone = CASE WHEN CAST(sqlc.arg(time_zone) AS TEXT) = '' THEN time_zone ELSE CAST(sqlc.arg(time_zone) AS TEXT) END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: IdentityRefreshed :execrows
UPDATE person_identities SET refreshed_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE platform = sqlc.arg(platform) AND workspace = sqlc.arg(workspace)
  AND user_id = sqlc.arg(user_id) AND person_id = sqlc.arg(person_id);

-- name: PeopleMarkMerged :execrows
UPDATE people SET merged_into = sqlc.arg(keep), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(drop) AND merged_into IS NULL;

-- name: IdentitiesMove :execrows
UPDATE person_identities SET person_id = sqlc.arg(keep) WHERE person_id = sqlc.arg(drop);

-- name: LinkCodesForget :execrows
DELETE FROM person_link_codes
WHERE person_id = sqlc.arg(person_id) OR expires_at <= CAST(sqlc.arg(now) AS INTEGER);

-- name: LinkCodeInsert :one
INSERT INTO person_link_codes (code_hash, person_id, platform, expires_at, created_at)
VALUES (sqlc.arg(code_hash), sqlc.arg(person_id), sqlc.arg(platform), CAST(sqlc.arg(expires_at) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: LinkCodeSpend :one
UPDATE person_link_codes SET used_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE code_hash = sqlc.arg(code_hash) AND used_at IS NULL AND expires_at > CAST(sqlc.arg(now) AS INTEGER)
RETURNING *;

-- name: LinkCodesPrune :execrows
-- Codes expired before the cutoff, used or not (see postgres/queries/people.sql).
DELETE FROM person_link_codes
WHERE code_hash IN (
    SELECT c.code_hash FROM person_link_codes AS c
    WHERE c.expires_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));

-- Forgetting a person (see the Postgres twin). authors and user_ids are
-- JSON arrays of every name the person wrote under (store.ForgetAuthors).

-- name: PeopleMergedInto :many
SELECT id FROM people WHERE merged_into = sqlc.arg(id) ORDER BY id;

-- name: ForgetBumpContentRev :exec
-- The conversations whose entries ForgetEntries is about to rewrite: their
-- streams' caches of encoded entries are stale after it.
UPDATE conversations SET content_rev = content_rev + 1
WHERE id IN (SELECT DISTINCT conversation_id FROM entries
             WHERE author IN (SELECT value FROM json_each(CAST(sqlc.arg(authors) AS TEXT))));

-- name: ForgetEntries :execrows
-- json_replace replaces only the keys there are.
UPDATE entries SET author = CAST(sqlc.arg(deleted_author) AS TEXT),
    content = CASE
        WHEN json_type(content) <> 'object' THEN content
        WHEN CAST(sqlc.arg(redact) AS INTEGER) <> 0 AND kind = 'user'
            THEN json_object('text', CAST(sqlc.arg(redacted_text) AS TEXT), 'redacted', json('true'))
        WHEN CAST(sqlc.arg(redact) AS INTEGER) <> 0
            THEN json_set(json_replace(json_remove(content, '$.files', '$.page_context'),
                    '$.text', CAST(sqlc.arg(redacted_text) AS TEXT),
                    '$.output', CAST(sqlc.arg(redacted_text) AS TEXT),
                    '$.user_id', CAST(sqlc.arg(deleted_user_id) AS TEXT),
                    '$.user_name', CAST(sqlc.arg(deleted_user_name) AS TEXT),
                    '$.decided_by', CAST(sqlc.arg(deleted_author) AS TEXT)),
                 '$.redacted', json('true'))
        ELSE json_replace(content,
                '$.user_id', CAST(sqlc.arg(deleted_user_id) AS TEXT),
                '$.user_name', CAST(sqlc.arg(deleted_user_name) AS TEXT),
                '$.decided_by', CAST(sqlc.arg(deleted_author) AS TEXT))
    END
WHERE author IN (SELECT value FROM json_each(CAST(sqlc.arg(authors) AS TEXT)));

-- name: ForgetDiscardedEntries :execrows
UPDATE discarded_entries SET author = CAST(sqlc.arg(deleted_author) AS TEXT),
    content = CASE
        WHEN json_type(content) <> 'object' THEN content
        WHEN CAST(sqlc.arg(redact) AS INTEGER) <> 0
            THEN json_object('text', CAST(sqlc.arg(redacted_text) AS TEXT), 'redacted', json('true'))
        ELSE json_replace(content,
                '$.user_id', CAST(sqlc.arg(deleted_user_id) AS TEXT),
                '$.user_name', CAST(sqlc.arg(deleted_user_name) AS TEXT))
    END
WHERE author IN (SELECT value FROM json_each(CAST(sqlc.arg(authors) AS TEXT)));

-- name: ForgetParticipants :exec
DELETE FROM participants WHERE author IN (SELECT value FROM json_each(CAST(sqlc.arg(authors) AS TEXT)));

-- name: ForgetCardChoices :exec
UPDATE card_choices SET user_id = CAST(sqlc.arg(deleted_user_id) AS TEXT), user_name = CAST(sqlc.arg(deleted_user_name) AS TEXT)
WHERE user_id IN (SELECT value FROM json_each(CAST(sqlc.arg(user_ids) AS TEXT)));

-- name: ForgetApprovalDeciders :exec
UPDATE approvals SET decided_by = CAST(sqlc.arg(deleted_author) AS TEXT)
WHERE decided_by IN (SELECT value FROM json_each(CAST(sqlc.arg(authors) AS TEXT)))
   OR decided_by IN (SELECT value FROM json_each(CAST(sqlc.arg(user_ids) AS TEXT)));

-- name: ForgetAuditDeciders :exec
UPDATE audit SET decided_by = CAST(sqlc.arg(deleted_author) AS TEXT)
WHERE decided_by IN (SELECT value FROM json_each(CAST(sqlc.arg(authors) AS TEXT)))
   OR decided_by IN (SELECT value FROM json_each(CAST(sqlc.arg(user_ids) AS TEXT)));

-- name: ForgetGrants :execrows
DELETE FROM grants
WHERE granted_by IN (SELECT value FROM json_each(CAST(sqlc.arg(user_ids) AS TEXT)))
   OR granted_by IN (SELECT value FROM json_each(CAST(sqlc.arg(authors) AS TEXT)));

-- name: ForgetPairings :execrows
DELETE FROM pairings WHERE platform = sqlc.arg(platform) AND user_id = sqlc.arg(user_id);

-- name: ForgetRefusalNotices :exec
DELETE FROM refusal_notices WHERE platform = sqlc.arg(platform) AND user_id = sqlc.arg(user_id);

-- name: ForgetAPIKeys :execrows
DELETE FROM api_keys WHERE person_id = sqlc.arg(person_id);

-- name: ForgetLogins :execrows
DELETE FROM web_logins WHERE person_id = sqlc.arg(person_id);

-- name: ForgetSSOGrants :exec
-- The workspace roles single sign-on gave them (their memberships go too).
DELETE FROM sso_grants WHERE person_id = sqlc.arg(person_id);

-- name: ForgetConnections :execrows
DELETE FROM connections WHERE owner_kind = 'person' AND owner_id = sqlc.arg(person_id);

-- name: ForgetPersonalNotes :execrows
DELETE FROM notes WHERE workspace_id IN (
    SELECT id FROM workspaces WHERE kind = 'personal' AND owner_person_id = sqlc.arg(person_id));

-- name: ForgetMemberships :execrows
DELETE FROM workspace_members WHERE person_id = sqlc.arg(person_id) AND role <> 'owner';

-- name: ForgetLinkCodes :exec
DELETE FROM person_link_codes WHERE person_id = sqlc.arg(person_id);

-- name: ForgetIdentities :execrows
DELETE FROM person_identities WHERE person_id = sqlc.arg(person_id);

-- name: ForgetPerson :execrows
DELETE FROM people WHERE id = sqlc.arg(id);
