-- Spending budgets (switchboard.yaml's budgets): what each budget has spent
-- in each period, and what turns have reserved against it for the model
-- call they are making.
--
-- budget_key names the budget ("agent:atlas", "workspace:T0TEAM",
-- "channel:C0OPS", "person:U0ALICE"); period is the UTC day or month it
-- counts ("day:2026-12-07", "month:2026-12"). extra_* are one-off
-- extensions an operator granted for the period; warned_at is when the
-- owner was told it passed 80 %, so they are told once.
CREATE TABLE budget_spend (
    budget_key      text NOT NULL,
    period          text NOT NULL,
    spent_micro_usd bigint NOT NULL DEFAULT 0,
    spent_tokens    bigint NOT NULL DEFAULT 0,
    extra_micro_usd bigint NOT NULL DEFAULT 0,
    extra_tokens    bigint NOT NULL DEFAULT 0,
    warned_at       timestamptz,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (budget_key, period)
);

-- A model call's worst case, held against each budget that applies until
-- the call's real cost is charged (the reservation deleted in the same
-- transaction) or, when its instance died, until expires_at: the turn
-- renews it with its lease.
CREATE TABLE budget_reservations (
    id          uuid NOT NULL,
    budget_key  text NOT NULL,
    period      text NOT NULL,
    micro_usd   bigint NOT NULL,
    tokens      bigint NOT NULL,
    holder      text NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (id, budget_key, period)
);
CREATE INDEX budget_reservations_by_budget ON budget_reservations (budget_key, period, expires_at);
