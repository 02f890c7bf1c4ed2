-- Single sign-on (OIDC) and sessions people can see and end.
--
-- web_logins and api_keys learn when, from where (IP) and with what (user
-- agent) each session or token was last used: written at most once a
-- minute per row by the request that uses it. method says how a console
-- session was opened (link, token, oidc); an OIDC session keeps the
-- provider's ID token as the hint of an RP-initiated logout and the
-- person's subject at the issuer.
ALTER TABLE web_logins ADD COLUMN method text NOT NULL DEFAULT '';
ALTER TABLE web_logins ADD COLUMN id_token text NOT NULL DEFAULT '';
ALTER TABLE web_logins ADD COLUMN last_used_at timestamptz;
ALTER TABLE web_logins ADD COLUMN last_ip text NOT NULL DEFAULT '';
ALTER TABLE web_logins ADD COLUMN last_user_agent text NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
ALTER TABLE api_keys ADD COLUMN last_ip text NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_user_agent text NOT NULL DEFAULT '';

-- A person's live sessions and tokens, listed by person.
CREATE INDEX web_logins_person ON web_logins (person_id, created_at) WHERE kind = 'session';
CREATE INDEX api_keys_person ON api_keys (person_id, created_at) WHERE person_id IS NOT NULL;

-- The sign-ins under way: the state of each authorization request (its
-- SHA-256), with the nonce and the PKCE verifier of that request, kept on
-- the server so a callback is taken once, on any instance.
CREATE TABLE oidc_states (
    state_hash    bytea PRIMARY KEY CHECK (length(state_hash) = 32),
    nonce         text NOT NULL,
    code_verifier text NOT NULL,
    return_to     text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);
CREATE INDEX oidc_states_expiry ON oidc_states (expires_at);

-- The workspace roles single sign-on gave a person from their groups: at
-- the next sign-in, a role whose group is gone is taken back, and only
-- those (a role given by hand is not SSO's to take).
CREATE TABLE sso_grants (
    person_id    uuid NOT NULL,
    workspace_id uuid NOT NULL,
    role         text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (person_id, workspace_id)
);
