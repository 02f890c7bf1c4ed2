-- Spending budgets: spend per budget and period, and the reservations
-- model calls hold against them. (SQLite has one writer: a writer
-- transaction already serialises reservations.)

-- name: BudgetSpendLock :one
INSERT INTO budget_spend (budget_key, period, updated_at)
VALUES (sqlc.arg(budget_key), sqlc.arg(period), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (budget_key, period) DO UPDATE SET updated_at = budget_spend.updated_at
RETURNING *;

-- name: BudgetSpendGet :one
SELECT * FROM budget_spend WHERE budget_key = sqlc.arg(budget_key) AND period = sqlc.arg(period);

-- name: BudgetReservationsExpire :exec
DELETE FROM budget_reservations
WHERE budget_key = sqlc.arg(budget_key) AND period = sqlc.arg(period) AND expires_at <= CAST(sqlc.arg(now) AS INTEGER);

-- name: BudgetReserved :one
SELECT CAST(COALESCE(sum(micro_usd), 0) AS INTEGER) AS micro_usd, CAST(COALESCE(sum(tokens), 0) AS INTEGER) AS tokens
FROM budget_reservations
WHERE budget_key = sqlc.arg(budget_key) AND period = sqlc.arg(period) AND expires_at > CAST(sqlc.arg(now) AS INTEGER);

-- name: BudgetReservationInsert :exec
INSERT INTO budget_reservations (id, budget_key, period, micro_usd, tokens, holder, expires_at, created_at)
VALUES (sqlc.arg(id), sqlc.arg(budget_key), sqlc.arg(period), sqlc.arg(micro_usd), sqlc.arg(tokens), sqlc.arg(holder),
        CAST(sqlc.arg(expires_at) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER));

-- name: BudgetReservationRenew :execrows
UPDATE budget_reservations SET expires_at = CAST(sqlc.arg(expires_at) AS INTEGER) WHERE id = sqlc.arg(id);

-- name: BudgetReservationDelete :exec
DELETE FROM budget_reservations WHERE id = sqlc.arg(id);

-- name: BudgetCharge :one
INSERT INTO budget_spend (budget_key, period, spent_micro_usd, spent_tokens, updated_at)
VALUES (sqlc.arg(budget_key), sqlc.arg(period), sqlc.arg(micro_usd), sqlc.arg(tokens), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (budget_key, period) DO UPDATE
SET spent_micro_usd = budget_spend.spent_micro_usd + excluded.spent_micro_usd,
    spent_tokens = budget_spend.spent_tokens + excluded.spent_tokens,
    updated_at = excluded.updated_at
RETURNING *;

-- name: BudgetWarned :execrows
UPDATE budget_spend SET warned_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE budget_key = sqlc.arg(budget_key) AND period = sqlc.arg(period) AND warned_at IS NULL;

-- name: BudgetExtend :one
INSERT INTO budget_spend (budget_key, period, extra_micro_usd, extra_tokens, updated_at)
VALUES (sqlc.arg(budget_key), sqlc.arg(period), sqlc.arg(micro_usd), sqlc.arg(tokens), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (budget_key, period) DO UPDATE
SET extra_micro_usd = budget_spend.extra_micro_usd + excluded.extra_micro_usd,
    extra_tokens = budget_spend.extra_tokens + excluded.extra_tokens,
    updated_at = excluded.updated_at
RETURNING *;
