-- Spending budgets: spend per budget and period, and the reservations
-- model calls hold against them.

-- name: BudgetSpendLock :one
-- The budget's row for the period, created empty when missing, locked
-- until the transaction ends: reservations against one budget queue here,
-- so two instances never both take its last dollar.
INSERT INTO budget_spend (budget_key, period, updated_at)
VALUES (@budget_key, @period, @now::timestamptz)
ON CONFLICT (budget_key, period) DO UPDATE SET updated_at = budget_spend.updated_at
RETURNING *;

-- name: BudgetSpendGet :one
SELECT * FROM budget_spend WHERE budget_key = @budget_key AND period = @period;

-- name: BudgetReservationsExpire :exec
DELETE FROM budget_reservations
WHERE budget_key = @budget_key AND period = @period AND expires_at <= @now::timestamptz;

-- name: BudgetReserved :one
SELECT COALESCE(sum(micro_usd), 0)::bigint AS micro_usd, COALESCE(sum(tokens), 0)::bigint AS tokens
FROM budget_reservations
WHERE budget_key = @budget_key AND period = @period AND expires_at > @now::timestamptz;

-- name: BudgetReservationInsert :exec
INSERT INTO budget_reservations (id, budget_key, period, micro_usd, tokens, holder, expires_at, created_at)
VALUES (@id, @budget_key, @period, @micro_usd, @tokens, @holder, @expires_at, @now::timestamptz);

-- name: BudgetReservationRenew :execrows
UPDATE budget_reservations SET expires_at = @expires_at WHERE id = @id;

-- name: BudgetReservationDelete :exec
DELETE FROM budget_reservations WHERE id = @id;

-- name: BudgetCharge :one
INSERT INTO budget_spend (budget_key, period, spent_micro_usd, spent_tokens, updated_at)
VALUES (@budget_key, @period, @micro_usd, @tokens, @now::timestamptz)
ON CONFLICT (budget_key, period) DO UPDATE
SET spent_micro_usd = budget_spend.spent_micro_usd + EXCLUDED.spent_micro_usd,
    spent_tokens = budget_spend.spent_tokens + EXCLUDED.spent_tokens,
    updated_at = EXCLUDED.updated_at
RETURNING *;

-- name: BudgetWarned :execrows
-- Marks the budget's period as warned; one row affected means this call is
-- the one that tells the owner.
UPDATE budget_spend SET warned_at = @now::timestamptz
WHERE budget_key = @budget_key AND period = @period AND warned_at IS NULL;

-- name: BudgetExtend :one
INSERT INTO budget_spend (budget_key, period, extra_micro_usd, extra_tokens, updated_at)
VALUES (@budget_key, @period, @micro_usd, @tokens, @now::timestamptz)
ON CONFLICT (budget_key, period) DO UPDATE
SET extra_micro_usd = budget_spend.extra_micro_usd + EXCLUDED.extra_micro_usd,
    extra_tokens = budget_spend.extra_tokens + EXCLUDED.extra_tokens,
    updated_at = EXCLUDED.updated_at
RETURNING *;
