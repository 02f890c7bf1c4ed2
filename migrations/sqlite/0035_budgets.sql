-- Spending budgets: see the Postgres migration of the same number.
CREATE TABLE budget_spend (
    budget_key      TEXT NOT NULL,
    period          TEXT NOT NULL,
    spent_micro_usd INTEGER NOT NULL DEFAULT 0,
    spent_tokens    INTEGER NOT NULL DEFAULT 0,
    extra_micro_usd INTEGER NOT NULL DEFAULT 0,
    extra_tokens    INTEGER NOT NULL DEFAULT 0,
    warned_at       INTEGER,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (budget_key, period)
) WITHOUT ROWID;

CREATE TABLE budget_reservations (
    id          TEXT NOT NULL,
    budget_key  TEXT NOT NULL,
    period      TEXT NOT NULL,
    micro_usd   INTEGER NOT NULL,
    tokens      INTEGER NOT NULL,
    holder      TEXT NOT NULL,
    expires_at  INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (id, budget_key, period)
) WITHOUT ROWID;
CREATE INDEX budget_reservations_by_budget ON budget_reservations (budget_key, period, expires_at);
