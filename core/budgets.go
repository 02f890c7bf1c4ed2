package core

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Budgets (budgets: in switchboard.yaml) bound what calls spend. Before a
// turn's model call it reserves the call's worst case (the prompt's size
// plus max_tokens, at the model's price) against every budget that applies
// (the agent's, the workspace's, the channel's, the person's; each per UTC
// day and month as it declares), all or none, in the store: instances that
// share it never overdraw together. The reservation lives a lease's length
// and the turn renews it while the call runs, so a dead instance's frees
// itself. The call's real cost is charged when its usage row is written,
// in the same transaction, deleting the reservation. The first charge
// that takes a budget past 80 % in a period tells its owner, once; a call
// that would pass a limit is refused and the person sees one line naming
// the budget and when it resets.

// BudgetWarnAt is the share of a budget past which its owner is told.
const BudgetWarnAt = 0.8

// budgetLine is one budget a call counts against, in one period.
type budgetLine struct {
	store.BudgetLine
	budget config.Budget
	daily  bool
}

// periodOf names the UTC day or month of now that a budget counts.
func periodOf(daily bool, now time.Time) string {
	now = now.UTC()
	if daily {
		return "day:" + now.Format("2006-01-02")
	}
	return "month:" + now.Format("2006-01")
}

// resetOf is when the period of now ends.
func resetOf(daily bool, now time.Time) time.Time {
	now = now.UTC()
	y, m, d := now.Date()
	if daily {
		return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
}

func microUSD(usd float64) int64 { return int64(math.Round(usd * 1e6)) }

// budgetScope is who and where a call is made for.
type budgetScope struct {
	agent, workspace, workspaceID, channel, person string
}

// budgetLines are the lines of every declared budget that applies to a
// call made for sc now.
func budgetLines(cfg *config.Config, sc budgetScope, now time.Time) []budgetLine {
	var out []budgetLine
	for _, b := range cfg.Budgets {
		applies := (b.Agent != "" && b.Agent == sc.agent) ||
			(b.Workspace != "" && (b.Workspace == sc.workspace || b.Workspace == sc.workspaceID)) ||
			(b.Channel != "" && b.Channel == sc.channel) ||
			(b.Person != "" && b.Person == sc.person)
		if !applies {
			continue
		}
		for _, daily := range []bool{true, false} {
			if usd, tokens := b.Limits(daily); usd > 0 || tokens > 0 {
				out = append(out, budgetLine{BudgetLine: store.BudgetLine{Key: b.Key(), Period: periodOf(daily, now),
					LimitMicroUSD: microUSD(usd), LimitTokens: tokens}, budget: b, daily: daily})
			}
		}
	}
	return out
}

func storeLines(lines []budgetLine) []store.BudgetLine {
	out := make([]store.BudgetLine, len(lines))
	for i, l := range lines {
		out[i] = l.BudgetLine
	}
	return out
}

// priceFor is the price of provider's model, known by any of names (the
// name the provider reported, then the one configured: a dated version, a
// scripted model's script name): switchboard.yaml's prices first, then the
// built-in list prices.
func (s *Service) priceFor(provider string, names ...string) (model.Price, bool) {
	prices := s.agents().Prices
	for _, name := range names {
		p, ok := prices[provider+":"+name]
		if !ok {
			continue
		}
		price := model.Price{InputPerMTok: p.Input, OutputPerMTok: p.Output, CachedInputPerMTok: p.Input, CacheWritePerMTok: p.Input}
		if p.CacheRead != nil {
			price.CachedInputPerMTok = *p.CacheRead
		}
		if p.CacheWrite != nil {
			price.CacheWritePerMTok = *p.CacheWrite
		}
		return price, true
	}
	for _, name := range names {
		if p, ok := model.PriceFor(provider, name); ok {
			return p, true
		}
	}
	return model.Price{}, false
}

// BudgetRefusal is a call refused because it would pass a budget.
type BudgetRefusal struct {
	Budget config.Budget
	Daily  bool
	Limit  store.BudgetLine
	State  *store.BudgetState
	Reset  time.Time
	Now    time.Time
}

func (r *BudgetRefusal) Error() string { return r.Line() }

// Line is what the person sees: one line naming the budget and when it
// resets.
func (r *BudgetRefusal) Line() string {
	period := "monthly"
	if r.Daily {
		period = "daily"
	}
	var limit, spent string
	if r.Limit.LimitMicroUSD > 0 && (r.Limit.LimitTokens == 0 || r.State.SpentMicroUSD+r.State.ReservedMicroUSD >= r.State.SpentTokens) {
		limit = usd(r.Limit.LimitMicroUSD + r.State.ExtraMicroUSD)
		spent = usd(r.State.SpentMicroUSD) + " spent"
	} else {
		limit = fmt.Sprintf("%d tokens", r.Limit.LimitTokens+r.State.ExtraTokens)
		spent = fmt.Sprintf("%d tokens used", r.State.SpentTokens)
	}
	return fmt.Sprintf("I can't answer this now: it would pass the %s budget of %s (%s; %s). It resets %s (in %s); an operator can extend it.",
		period, r.Budget.Describe(), limit, spent, r.Reset.Format("2 Jan 15:04 UTC"), roundDuration(r.Reset.Sub(r.Now)))
}

func usd(micro int64) string { return fmt.Sprintf("$%.2f", float64(micro)/1e6) }

func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	default:
		return "under a minute"
	}
}

// How long a call waits for room that calls in flight hold (see reserve).
const (
	budgetWaitFirst = 50 * time.Millisecond
	budgetWaitStep  = time.Second
	budgetWaitMax   = 2 * time.Minute
)

// fitsUnreserved reports whether a call of usd and tokens fits line l as
// st stands, were nothing reserved: it was refused only for what calls in
// flight hold.
func fitsUnreserved(l store.BudgetLine, st *store.BudgetState, usd, tokens int64) bool {
	if st.ReservedMicroUSD == 0 && st.ReservedTokens == 0 {
		return false
	}
	if l.LimitMicroUSD > 0 && st.SpentMicroUSD+usd > l.LimitMicroUSD+st.ExtraMicroUSD {
		return false
	}
	return l.LimitTokens == 0 || st.SpentTokens+tokens <= l.LimitTokens+st.ExtraTokens
}

// reservation is a model call's hold on its budgets, renewed while the
// call runs.
type reservation struct {
	id    uuid.UUID
	lines []budgetLine
	stop  context.CancelFunc
	done  chan struct{}
}

// end stops renewing; the reservation is then charged or released.
func (r *reservation) end() {
	if r == nil || r.stop == nil {
		return
	}
	r.stop()
	<-r.done
	r.stop = nil
}

// scope is who and where the turn's calls are made for.
func (t *turn) budgetScope() budgetScope {
	return budgetScope{agent: t.agent.Name, workspace: t.workspace, workspaceID: workspaceIDString(t.workspaceID),
		channel: t.place.Channel, person: t.turnStarter()}
}

// reserve holds the worst case of the model call req against every budget
// that applies; nil when none does. A refusal is a *BudgetRefusal.
func (t *turn) reserve(ctx context.Context, req *model.Request) (*reservation, error) {
	cfg := t.s.agents()
	if len(cfg.Budgets) == 0 {
		return nil, nil
	}
	now := t.s.now()
	lines := budgetLines(cfg, t.budgetScope(), now)
	if len(lines) == 0 {
		return nil, nil
	}
	raw, _ := json.Marshal(req)
	in := int64(estimate(len(raw))) + 1
	out := int64(req.MaxTokens)
	if out <= 0 {
		out = int64(t.agent.MaxTokens)
	}
	var cost int64
	spec, _ := model.ParseSpec(t.agent.Model)
	if price, ok := t.s.priceFor(spec.Provider, spec.Model); ok {
		cost = model.Usage{InputTokens: in, OutputTokens: out}.CostMicroUSD(price)
	}
	id := uuid.New()
	ttl := t.s.opts.LeaseTTL
	var res *store.BudgetReserveResult
	wait := budgetWaitFirst
	for waited := time.Duration(0); ; {
		var err error
		res, err = t.s.st.BudgetReserve(ctx, &store.BudgetReserveParams{
			ID: id, Lines: storeLines(lines), MicroUSD: cost, Tokens: in + out,
			Holder: t.s.opts.WorkerID + " turn " + t.item.ID.String(), Now: now, TTL: ttl,
		})
		if err != nil {
			return nil, fmt.Errorf("reserving against the budgets: %w", err)
		}
		// Refused only for what calls in flight hold: their worst cases
		// are settled at their (usually far lower) real cost within a
		// call's time, so wait for room rather than refuse a call the
		// budget can pay for.
		if res.OK || !fitsUnreserved(*res.Line, res.Refused, cost, in+out) || waited >= budgetWaitMax {
			break
		}
		if waited == 0 {
			t.status("is waiting for room in its budget…")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		waited += wait
		wait = min(2*wait, budgetWaitStep)
		now = t.s.now()
	}
	if !res.OK {
		for _, l := range lines {
			if l.Key == res.Line.Key && l.Period == res.Line.Period {
				return nil, &BudgetRefusal{Budget: l.budget, Daily: l.daily, Limit: l.BudgetLine, State: res.Refused, Reset: resetOf(l.daily, now), Now: now}
			}
		}
		return nil, fmt.Errorf("reserving against the budgets: refused by %s, which the turn did not ask for", res.Line.Key)
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r := &reservation{id: id, lines: lines, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		tick := time.NewTicker(ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-tick.C:
				if _, err := t.s.st.BudgetRenew(rctx, id, t.s.now().Add(ttl)); err != nil && rctx.Err() == nil {
					t.s.log.WarnContext(rctx, "renewing a budget reservation", "reservation", id, "error", redact.String(err.Error()))
				}
			}
		}
	}()
	return r, nil
}

// release gives a reservation back (the call failed: nothing to charge).
func (t *turn) release(ctx context.Context, r *reservation) {
	if r == nil {
		return
	}
	r.end()
	if err := t.s.st.BudgetRelease(context.WithoutCancel(ctx), r.id); err != nil {
		t.s.log.WarnContext(ctx, "releasing a budget reservation; it frees itself at its expiry", "reservation", r.id, "error", redact.String(err.Error()))
	}
}

// charge adds a call's real cost to its budgets inside the transaction
// that records its usage, deleting the reservation, and tells the owner of
// each budget it takes past 80 % for the first time this period.
func (s *Service) charge(ctx context.Context, q store.Queries, r *reservation, u *store.Usage, agent string, place store.Place) error {
	if r == nil {
		return nil
	}
	var rid *uuid.UUID
	if r.id != uuid.Nil {
		rid = &r.id
	}
	warn, err := q.BudgetCharge(ctx, &store.BudgetChargeParams{
		Reservation: rid, Lines: storeLines(r.lines), MicroUSD: u.CostMicroUSD,
		Tokens: u.InputTokens + u.CachedTokens + u.CacheWriteTokens + u.OutputTokens, WarnAt: BudgetWarnAt, Now: u.CreatedAt,
	})
	if err != nil {
		return fmt.Errorf("charging the budgets: %w", err)
	}
	for _, w := range warn {
		for _, l := range r.lines {
			if l.Key == w.Key && l.Period == w.Period {
				if err := s.warnOwner(ctx, q, l, agent, place, u.CreatedAt); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// chargeAfter charges a model call made outside a turn's steps (a
// summary, a run's judge or reviewer, a plan's extraction) to the budgets
// of its agent and of its conversation's workspace and channel, after the
// call: it reserved nothing, so it can pass a limit by its own cost.
func (s *Service) chargeAfter(ctx context.Context, q store.Queries, agent string, u *store.Usage) error {
	cfg := s.agents()
	if len(cfg.Budgets) == 0 {
		return nil
	}
	place, err := s.placeOf(ctx, u.ConversationID)
	if err != nil {
		return err
	}
	ws, err := s.st.ConversationWorkspace(ctx, u.ConversationID)
	if err != nil {
		return fmt.Errorf("finding the workspace of %s: %w", u.ConversationID, err)
	}
	lines := budgetLines(cfg, budgetScope{agent: agent, workspace: place.Workspace, workspaceID: workspaceIDString(ws), channel: place.Channel}, u.CreatedAt)
	if len(lines) == 0 {
		return nil
	}
	return s.charge(ctx, q, &reservation{lines: lines}, u, agent, place)
}

// recordUsage records (and prices, when the caller did not) the usage of a
// model call made outside a turn's steps, charging it to its budgets in
// the same transaction.
func (s *Service) recordUsage(ctx context.Context, agent string, u *store.Usage) error {
	if u.CostMicroUSD == 0 {
		if price, ok := s.priceFor(u.Provider, u.Model); ok {
			u.CostMicroUSD = model.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CachedTokens: u.CachedTokens, CacheWriteTokens: u.CacheWriteTokens}.CostMicroUSD(price)
		}
	}
	return s.st.InTx(ctx, func(q store.Queries) error {
		if err := q.UsageRecord(ctx, u); err != nil {
			return err
		}
		return s.chargeAfter(ctx, q, agent, u)
	})
}

// warnOwner posts the 80 % notice to the budget's owner, in their DM on the
// platform and workspace of the conversation whose call passed it.
func (s *Service) warnOwner(ctx context.Context, q store.Queries, l budgetLine, agent string, place store.Place, now time.Time) error {
	cfg := s.agents()
	owner := l.budget.Owner
	if owner == "" && len(cfg.Access.Admins) > 0 {
		owner = cfg.Access.Admins[0]
	}
	if owner == "" && len(cfg.Approvals.Admins) > 0 {
		owner = cfg.Approvals.Admins[0]
	}
	st, err := q.BudgetGet(ctx, &store.BudgetGetParams{Key: l.Key, Period: l.Period, Now: now})
	if err != nil {
		return fmt.Errorf("reading budget %s: %w", l.Key, err)
	}
	text := budgetNotice(l, st)
	if owner == "" || place.Platform == "" {
		s.log.WarnContext(ctx, "a budget passed 80 % and it has nobody to tell: set its owner", "budget", l.Key, "period", l.Period, "notice", text)
		return nil
	}
	dm := store.DM(place.Platform, place.Workspace, owner)
	dm.Run = "budget:" + l.Key + ":" + l.Period
	agentID := s.agentID(agent)
	ens, err := q.BindingEnsure(ctx, &store.BindingEnsureParams{
		Place:        dm,
		Conversation: store.ConversationCreateParams{AgentID: agentID, Title: "Budget notice", Metadata: ConversationMeta{Context: tool.ContextScheduler, Starter: owner}.Encode(), Now: now},
		Now:          now,
	})
	if err != nil {
		return fmt.Errorf("binding the budget notice of %s: %w", l.Key, err)
	}
	return Say(ctx, q, &SayParams{ConversationID: ens.Binding.ConversationID, Agent: agent, AgentID: agentID, Text: text, Now: now})
}

// budgetNotice is the 80 % message.
func budgetNotice(l budgetLine, st *store.BudgetState) string {
	period, when := "monthly", "this month"
	if l.daily {
		period, when = "daily", "today"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Budget notice: %s has used over %d %% of its %s budget %s", l.budget.Describe(), int(BudgetWarnAt*100), period, when)
	if l.LimitMicroUSD > 0 {
		fmt.Fprintf(&b, " (%s of %s)", usd(st.SpentMicroUSD), usd(l.LimitMicroUSD+st.ExtraMicroUSD))
	} else {
		fmt.Fprintf(&b, " (%d of %d tokens)", st.SpentTokens, l.LimitTokens+st.ExtraTokens)
	}
	b.WriteString(". Calls that would pass it are refused until it resets; an operator can extend it (switchboard budgets extend).")
	return b.String()
}

// auditRefusal records a refused call in the audit.
func (t *turn) auditRefusal(ctx context.Context, r *BudgetRefusal) {
	conv := t.conv.ID
	detail, _ := json.Marshal(map[string]any{
		"budget": r.Budget.Key(), "period": r.Limit.Period, "limit_micro_usd": r.Limit.LimitMicroUSD, "limit_tokens": r.Limit.LimitTokens,
		"spent_micro_usd": r.State.SpentMicroUSD, "reserved_micro_usd": r.State.ReservedMicroUSD, "extra_micro_usd": r.State.ExtraMicroUSD,
	})
	if err := t.s.st.AuditRecord(ctx, &store.AuditRecord{
		ConversationID: &conv, CallID: "budget:" + t.item.ID.String(), Agent: t.agent.Name, Actor: string(store.AgentAuthor(t.agent.Name)),
		Action: "model_call", Risk: string(tool.RiskHigh), Decision: "budget", Outcome: store.AuditDenied, DecidedBy: store.DecidedByPolicy,
		Detail: detail, CreatedAt: t.s.now(),
	}); err != nil {
		t.s.log.WarnContext(ctx, "auditing a budget refusal", "error", redact.String(err.Error()))
	}
}

// BudgetStatus is one budget's period as the API, the CLI and the console
// show it.
type BudgetStatus struct {
	Key         string    `json:"key"`
	Period      string    `json:"period"`
	LimitUSD    float64   `json:"limit_usd,omitempty"`
	LimitTokens int64     `json:"limit_tokens,omitempty"`
	SpentUSD    float64   `json:"spent_usd"`
	SpentTokens int64     `json:"spent_tokens"`
	ReservedUSD float64   `json:"reserved_usd"`
	ExtraUSD    float64   `json:"extra_usd,omitempty"`
	ExtraTokens int64     `json:"extra_tokens,omitempty"`
	Warned      bool      `json:"warned"`
	ResetsAt    time.Time `json:"resets_at"`
}

// Budgets reads every declared budget's current day and month.
func (s *Service) Budgets(ctx context.Context) ([]BudgetStatus, error) {
	return ReadBudgets(ctx, s.st, s.agents(), s.now())
}

// ReadBudgets reads every budget cfg declares, its day and month of now,
// from st (the CLI's way, without a running service).
func ReadBudgets(ctx context.Context, st store.Store, cfg *config.Config, now time.Time) ([]BudgetStatus, error) {
	var out []BudgetStatus
	for _, b := range cfg.Budgets {
		for _, daily := range []bool{true, false} {
			if usd, tokens := b.Limits(daily); usd == 0 && tokens == 0 {
				continue
			}
			bs, err := st.BudgetGet(ctx, &store.BudgetGetParams{Key: b.Key(), Period: periodOf(daily, now), Now: now})
			if err != nil {
				return nil, fmt.Errorf("reading budget %s: %w", b.Key(), err)
			}
			out = append(out, statusOf(b, daily, bs, now))
		}
	}
	return out, nil
}

// BudgetExtension is a one-off extension of a budget's current period.
type BudgetExtension struct {
	Key     string  `json:"key"`
	Monthly bool    `json:"monthly,omitempty"` // the month's period; default the day's
	USD     float64 `json:"usd,omitempty"`
	Tokens  int64   `json:"tokens,omitempty"`
	// By is who granted it, for the audit.
	By string `json:"-"`
}

// ExtendBudget grants a one-off extension to a declared budget's current
// day or month, and records it in the audit.
func (s *Service) ExtendBudget(ctx context.Context, e BudgetExtension) (*BudgetStatus, error) {
	return ExtendBudgetIn(ctx, s.st, s.agents(), e, s.now())
}

// ExtendBudgetIn is ExtendBudget on st for the budgets cfg declares (the
// CLI's way).
func ExtendBudgetIn(ctx context.Context, s store.Store, cfg *config.Config, e BudgetExtension, now time.Time) (*BudgetStatus, error) {
	b, err := cfg.BudgetByKey(e.Key)
	if err != nil {
		return nil, invalid("%s", err.Error())
	}
	if e.USD < 0 || e.Tokens < 0 || (e.USD == 0 && e.Tokens == 0) {
		return nil, invalid("extending a budget: give usd or tokens, positive")
	}
	daily := !e.Monthly
	if usd, tokens := b.Limits(daily); usd == 0 && tokens == 0 {
		return nil, invalid("extending %s: it has no %s limit", b.Describe(), map[bool]string{true: "daily", false: "monthly"}[daily])
	}
	st, err := s.BudgetExtend(ctx, &store.BudgetExtendParams{Key: e.Key, Period: periodOf(daily, now), MicroUSD: microUSD(e.USD), Tokens: e.Tokens, Now: now})
	if err != nil {
		return nil, fmt.Errorf("extending budget %s: %w", e.Key, err)
	}
	detail, _ := json.Marshal(map[string]any{"budget": e.Key, "period": st.Period, "usd": e.USD, "tokens": e.Tokens})
	if err := s.AuditRecord(ctx, &store.AuditRecord{
		CallID: "budget-extend:" + uuid.NewString(), Actor: e.By, Action: "budget_extend", Risk: string(tool.RiskHigh),
		Decision: "extend", Outcome: store.AuditOK, DecidedBy: e.By, Detail: detail, CreatedAt: now,
	}); err != nil {
		return nil, fmt.Errorf("auditing the extension of %s: %w", e.Key, err)
	}
	out := statusOf(b, daily, st, now)
	return &out, nil
}

// statusOf is budget b's day (daily) or month as st holds it.
func statusOf(b config.Budget, daily bool, st *store.BudgetState, now time.Time) BudgetStatus {
	usd, tokens := b.Limits(daily)
	return BudgetStatus{
		Key: b.Key(), Period: st.Period, LimitUSD: usd, LimitTokens: tokens,
		SpentUSD: float64(st.SpentMicroUSD) / 1e6, SpentTokens: st.SpentTokens, ReservedUSD: float64(st.ReservedMicroUSD) / 1e6,
		ExtraUSD: float64(st.ExtraMicroUSD) / 1e6, ExtraTokens: st.ExtraTokens, Warned: st.WarnedAt != nil,
		ResetsAt: resetOf(daily, now),
	}
}

// BudgetObserver is the optional part of an Observer that counts budget
// refusals.
type BudgetObserver interface {
	BudgetRefused(budget, period string)
}

func (s *Service) observeBudgetRefusal(r *BudgetRefusal) {
	if o, ok := s.opts.Observer.(BudgetObserver); ok {
		period := "month"
		if r.Daily {
			period = "day"
		}
		o.BudgetRefused(r.Budget.Key(), period)
	}
}
