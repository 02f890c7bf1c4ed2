package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The rules every driver shares live here, in front of the drivers, so
// that a driver only runs queries and maps its database's errors: argument
// checks, defaults, the per-agent schedule limit and the sweep's retention.
// A driver's Open returns its queries behind New; callers never reach a
// driver's queries without these rules.

// Retention windows of the rows Sweep deletes.
const (
	// InboundRetention: platforms redeliver an event within minutes (Slack
	// retries for about an hour), so a week of event ids is ample dedupe.
	InboundRetention = 7 * 24 * time.Hour
	// DefaultWorkRetention: finished work items are kept a week for
	// inspection unless SweepParams.WorkRetention says otherwise. Their
	// unique keys are spent by then (see WorkPruneParams).
	DefaultWorkRetention = 7 * 24 * time.Hour
	// MinWorkRetention is the shortest WorkRetention: a finished item must
	// outlive the redeliveries and retries that could enqueue its unique
	// key again.
	MinWorkRetention = time.Hour
	// LeaseRetention: a named or instance lease expired for this long has
	// no holder coming back for it.
	LeaseRetention = time.Hour
)

// Defaults the rules fill in.
const (
	DefaultMaxAttempts = 3    // WorkEnqueueParams.MaxAttempts
	DefaultListLimit   = 100  // the bounded lists (due schedules, expired approvals and leases)
	DefaultPruneLimit  = 1000 // PruneParams.Limit, WorkPruneParams.Limit
	// SweepBudget bounds one Sweep's deleting: batches run one after the
	// other until a batch comes back short or this much time has passed.
	SweepBudget = 10 * time.Second
)

// Options configures New.
type Options struct {
	// Now supplies the time when a params struct leaves Now zero. Default
	// time.Now.
	Now func() time.Time
	// GroupLanes is how many group commits (InTxGroup) may run at once:
	// 1 (the default) for a store with one writer, a few for a server whose
	// round trips a batch waits on.
	GroupLanes int
}

// New returns d behind the shared rules. d is a driver's own store: it may
// trust that every params struct it gets was checked, has its defaults
// filled in, and is not the caller's (the rules work on a copy).
func New(d Driver, o Options) Store {
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &ruled{d: d}
	r.checked = checked{Queries: d, now: o.Now, db: r}
	r.group = newGroup(r.InTx, maxGroup, o.GroupLanes, false)
	r.behind = newGroup(r.InTx, maxGroup, o.GroupLanes, true)
	r.enqueues = newEnqueueGroup(r.checked.WorkEnqueueMany, maxGroup, o.GroupLanes)
	return r
}

// ruled is a Store behind the rules.
type ruled struct {
	checked
	d     Driver
	group *group
	// behind groups the InTxGroup calls made under GroupBehind.
	behind *group
	// enqueues groups the EnqueueGroup calls.
	enqueues *enqueueGroup
}

// maxGroup bounds the calls one group commit holds, so that one
// transaction's locks and redo stay small.
const maxGroup = 128

func (r *ruled) InTxGroup(ctx context.Context, fn func(q Queries) error) error {
	if groupBehind(ctx) {
		return r.behind.do(ctx, fn)
	}
	return r.group.do(ctx, fn)
}

func (r *ruled) EnqueueGroup(ctx context.Context, p *WorkEnqueueParams) (*WorkEnqueueResult, error) {
	return r.enqueues.do(ctx, p)
}

func (r *ruled) InTx(ctx context.Context, fn func(q Queries) error) error {
	return r.d.InTx(ctx, func(q Queries) error {
		return fn(checked{Queries: q, now: r.now})
	})
}

func (r *ruled) Sweep(ctx context.Context, p *SweepParams) (*SweepResult, error) {
	now, retention := p.Now, p.WorkRetention
	if now.IsZero() {
		now = r.now()
	}
	if retention == 0 {
		retention = DefaultWorkRetention
	}
	if retention < MinWorkRetention {
		return nil, fmt.Errorf("sweeping: %w: WorkRetention %s is under the minimum %s", ErrInvalid, retention, MinWorkRetention)
	}
	var (
		res  SweepResult
		errs []error
		err  error
	)
	// Deleting runs against the clock of the process, not the sweep's now:
	// a test's frozen clock must not make the budget endless.
	deadline := time.Now().Add(SweepBudget)
	res.Inbound, err = pruneAll(ctx, deadline, func() (int, error) {
		return r.d.InboundPrune(ctx, &PruneParams{Before: now.Add(-InboundRetention), Limit: DefaultPruneLimit})
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("pruning inbound event ids: %w", err))
	}
	res.Work, err = pruneAll(ctx, deadline, func() (int, error) {
		return r.d.WorkPrune(ctx, &WorkPruneParams{FinishedBefore: now.Add(-retention), Limit: DefaultPruneLimit})
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("pruning finished work: %w", err))
	}
	res.Leases, err = r.d.LeasePrune(ctx, &PruneParams{Before: now.Add(-LeaseRetention), Limit: DefaultPruneLimit})
	if err != nil {
		errs = append(errs, fmt.Errorf("pruning named leases: %w", err))
	}
	// An instance lease expired that long ago belongs to a process that
	// died without a graceful stop (a chat's own id is never used again).
	n, err := r.d.InstanceLeasePrune(ctx, &PruneParams{Before: now.Add(-LeaseRetention), Limit: DefaultPruneLimit})
	res.Leases += n
	if err != nil {
		errs = append(errs, fmt.Errorf("pruning instance leases: %w", err))
	}
	// A link code is worthless once expired: no retention.
	res.LinkCodes, err = r.d.PersonLinkCodePrune(ctx, &PruneParams{Before: now, Limit: DefaultPruneLimit})
	if err != nil {
		errs = append(errs, fmt.Errorf("pruning link codes: %w", err))
	}
	return &res, errors.Join(errs...)
}

// pruneAll runs one batch of a prune after another until a batch comes back
// short of DefaultPruneLimit (nothing left), the deadline passes or ctx
// ends. At 1,000 rows a batch, a store keeps up with tens of thousands of
// finished rows a second; a fixed batch a sweep (once a minute) kept up
// with 17.
func pruneAll(ctx context.Context, deadline time.Time, batch func() (int, error)) (int, error) {
	total := 0
	for {
		n, err := batch()
		total += n
		if err != nil || n < DefaultPruneLimit || time.Now().After(deadline) || ctx.Err() != nil {
			return total, err
		}
	}
}

func (r *ruled) Publish(ctx context.Context, topic, payload string) error {
	if topic == "" {
		return fmt.Errorf("publishing: %w: empty topic", ErrInvalid)
	}
	return r.d.Publish(ctx, topic, payload)
}

func (r *ruled) Subscribe(ctx context.Context, topic string) (<-chan Notification, error) {
	if topic == "" {
		return nil, fmt.Errorf("subscribing: %w: empty topic", ErrInvalid)
	}
	return r.d.Subscribe(ctx, topic)
}

func (r *ruled) Migrate(ctx context.Context) (int, error) { return r.d.Migrate(ctx) }

func (r *ruled) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	return r.d.SchemaVersion(ctx)
}

func (r *ruled) SchemaState(ctx context.Context) (*SchemaState, error) {
	return r.d.SchemaState(ctx)
}

func (r *ruled) Ping(ctx context.Context) error { return r.d.Ping(ctx) }
func (r *ruled) Dialect() string                { return r.d.Dialect() }
func (r *ruled) Close() error                   { return r.d.Close() }

// checked puts the rules in front of a driver's Queries: the store's own
// outside a transaction (db set), or a transaction's (db nil).
type checked struct {
	Queries
	now func() time.Time
	db  Store // for rules that need a transaction of their own; nil inside one
}

// atomic runs fn in the surrounding transaction, or in a new one.
func (q checked) atomic(ctx context.Context, fn func(q Queries) error) error {
	if q.db == nil {
		return fn(q.Queries)
	}
	return q.db.InTx(ctx, func(tq Queries) error { return fn(tq.(checked).Queries) })
}

func (q checked) at(t time.Time) time.Time {
	if t.IsZero() {
		return q.now()
	}
	return t
}

// newID makes a time-ordered id (UUIDv7), so rows created at the same
// instant still list in the order they were made.
func newID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// jsonOr checks that raw is JSON, or returns def when raw is empty.
func jsonOr(field string, raw json.RawMessage, def string) (json.RawMessage, error) {
	if len(raw) == 0 {
		if def == "" {
			return nil, nil
		}
		return json.RawMessage(def), nil
	}
	if !json.Valid(raw) {
		return nil, invalidf("%s is not valid JSON", field)
	}
	return raw, nil
}

// canonicalJSON is jsonOr that also writes raw as encoding/json writes a
// json.RawMessage: compact, with <, >, &, U+2028 and U+2029 escaped. An
// entry's content is stored so, and a stream sends it as it is stored
// (EntryScan), byte for byte what encoding/json would send, with no second
// pass over it on every read.
func canonicalJSON(field string, raw json.RawMessage, def string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return jsonOr(field, raw, def)
	}
	out, err := json.Marshal(raw) // validates, compacts and escapes in one pass
	if err != nil {
		return nil, invalidf("%s is not valid JSON", field)
	}
	return out, nil
}

func limitOr(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}

// ---- conversations and the log ----

func (q checked) ConversationCreate(ctx context.Context, p *ConversationCreateParams) (*Conversation, error) {
	c, err := q.conversationDefaults(p)
	if err != nil {
		return nil, fmt.Errorf("creating conversation: %w", err)
	}
	return q.Queries.ConversationCreate(ctx, c)
}

func (q checked) conversationDefaults(p *ConversationCreateParams) (*ConversationCreateParams, error) {
	if p == nil {
		return nil, invalidf("params are nil")
	}
	c := *p
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	var err error
	if c.Metadata, err = jsonOr("Metadata", c.Metadata, "{}"); err != nil {
		return nil, err
	}
	c.Now = q.at(c.Now)
	return &c, nil
}

func (q checked) ConversationSetStatus(ctx context.Context, p *ConversationStatusParams) (*Conversation, error) {
	switch {
	case p == nil:
		return nil, invalidf("setting conversation status: params are nil")
	case p.Status != ConversationIdle && p.Status != ConversationRunning && p.Status != ConversationPaused:
		return nil, fmt.Errorf("setting status of %s: %w", p.ConversationID, invalidf("unknown status %q", p.Status))
	case p.TurnAttempts != nil && *p.TurnAttempts < 0:
		return nil, fmt.Errorf("setting status of %s: %w", p.ConversationID, invalidf("negative TurnAttempts"))
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ConversationSetStatus(ctx, &c)
}

func (q checked) ConversationLeaseRelease(ctx context.Context, p *ConversationLeaseParams) error {
	if p == nil || p.Owner == "" {
		return invalidf("releasing a conversation lease: empty Owner")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ConversationLeaseRelease(ctx, &c)
}

func (q checked) ConversationListExpiredLeases(ctx context.Context, p *ConversationListExpiredLeasesParams) ([]*Conversation, error) {
	c := ConversationListExpiredLeasesParams{}
	if p != nil {
		c = *p
	}
	c.Now, c.Limit = q.at(c.Now), limitOr(c.Limit, DefaultListLimit)
	return q.Queries.ConversationListExpiredLeases(ctx, &c)
}

func (q checked) EntryAppend(ctx context.Context, p *EntryAppendParams) (*EntryAppendResult, error) {
	switch {
	case p == nil:
		return nil, invalidf("appending entry: params are nil")
	case !p.Kind.Valid():
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID, invalidf("unknown kind %q", p.Kind))
	case p.ExpectSeq != nil && *p.ExpectSeq < 1 && p.Kind != EntryError:
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID,
			invalidf("ExpectSeq must be at least 1, got %d", *p.ExpectSeq))
	}
	c := *p
	var err error
	if c.Content, err = canonicalJSON("Content", c.Content, "{}"); err != nil {
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID, err)
	}
	if c.Kind == EntryError {
		c.ExpectSeq, c.Title = nil, ""
	}
	if c.Title = strings.TrimSpace(c.Title); len([]rune(c.Title)) > MaxTitleChars {
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID,
			invalidf("Title has %d characters, more than %d", len([]rune(c.Title)), MaxTitleChars))
	}
	c.Now = q.at(c.Now)
	return q.Queries.EntryAppend(ctx, &c)
}

// AppendAction is what an append does given the log's last seq: see
// DecideAppend.
type AppendAction int

const (
	AppendNext AppendAction = iota // take the next seq
	AppendFork                     // fork at ExpectSeq
)

// DecideAppend is the fork rule, for a driver that has read the log's last
// seq under the conversation's lock: no ExpectSeq, or ExpectSeq equal to the
// next seq, appends; an ExpectSeq already taken forks there; one past the
// next seq is ErrConflict (the caller skipped a seq it cannot have seen).
func DecideAppend(lastSeq int64, expectSeq *int64) (AppendAction, error) {
	if expectSeq == nil || *expectSeq == lastSeq+1 {
		return AppendNext, nil
	}
	if *expectSeq > lastSeq+1 {
		return 0, fmt.Errorf("%w: ExpectSeq %d is past the next seq %d", ErrConflict, *expectSeq, lastSeq+1)
	}
	return AppendFork, nil
}

func (q checked) EntryList(ctx context.Context, p *EntryListParams) ([]*Entry, error) {
	switch {
	case p == nil:
		return nil, invalidf("listing entries: params are nil")
	case p.AfterSeq < 0 || p.UpToSeq < 0 || p.Limit < 0:
		return nil, fmt.Errorf("listing entries of %s: %w", p.ConversationID, invalidf("negative AfterSeq, UpToSeq or Limit"))
	}
	return q.Queries.EntryList(ctx, p)
}

func (q checked) EntryScan(ctx context.Context, p *EntryListParams, each func(*EntryRow) error) error {
	switch {
	case p == nil || each == nil:
		return invalidf("scanning entries: params or callback are nil")
	case p.AfterSeq < 0 || p.UpToSeq < 0 || p.Limit < 0:
		return fmt.Errorf("scanning entries of %s: %w", p.ConversationID, invalidf("negative AfterSeq, UpToSeq or Limit"))
	}
	return q.Queries.EntryScan(ctx, p, each)
}

// ---- the work queue ----

func (q checked) WorkEnqueue(ctx context.Context, p *WorkEnqueueParams) (*WorkEnqueueResult, error) {
	c, err := q.enqueueParams(p)
	if err != nil {
		return nil, err
	}
	return q.Queries.WorkEnqueue(ctx, c)
}

func (q checked) WorkEnqueueMany(ctx context.Context, ps []*WorkEnqueueParams) ([]*WorkEnqueueResult, error) {
	cs := make([]*WorkEnqueueParams, len(ps))
	for i, p := range ps {
		c, err := q.enqueueParams(p)
		if err != nil {
			return nil, fmt.Errorf("item %d of %d: %w", i, len(ps), err)
		}
		cs[i] = c
	}
	if len(cs) == 0 {
		return nil, nil
	}
	return q.Queries.WorkEnqueueMany(ctx, cs)
}

// enqueueParams checks p and returns a copy with its defaults filled in.
func (q checked) enqueueParams(p *WorkEnqueueParams) (*WorkEnqueueParams, error) {
	switch {
	case p == nil:
		return nil, invalidf("enqueueing work: params are nil")
	case p.Kind == "":
		return nil, invalidf("enqueueing work: empty Kind")
	case p.MaxAttempts < 0:
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, invalidf("negative MaxAttempts"))
	case p.UniqueKey != nil && *p.UniqueKey == "":
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, invalidf("empty UniqueKey (use nil for none)"))
	}
	c := *p
	var err error
	if c.Payload, err = jsonOr("Payload", c.Payload, "{}"); err != nil {
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, err)
	}
	c.Now = q.at(c.Now)
	if c.RunAt.IsZero() {
		c.RunAt = c.Now
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	return &c, nil
}

func (q checked) WorkClaim(ctx context.Context, p *WorkClaimParams) ([]*WorkItem, error) {
	switch {
	case p == nil:
		return nil, invalidf("claiming work: params are nil")
	case p.Worker == "":
		return nil, invalidf("claiming work: empty Worker")
	case p.Limit <= 0:
		return nil, invalidf("claiming work: Limit must be positive, got %d", p.Limit)
	case p.LeaseTTL <= 0:
		return nil, invalidf("claiming work: LeaseTTL must be positive, got %s", p.LeaseTTL)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.WorkClaim(ctx, &c)
}

// lease checks the params of the calls made by an item's holder.
func (q checked) lease(what string, p *WorkLeaseParams, needTTL bool) (*WorkLeaseParams, error) {
	switch {
	case p == nil:
		return nil, invalidf("%s work: params are nil", what)
	case p.Worker == "":
		return nil, fmt.Errorf("%s work %s: %w", what, p.ID, invalidf("empty Worker"))
	case needTTL && p.LeaseTTL <= 0:
		return nil, fmt.Errorf("%s work %s: %w", what, p.ID, invalidf("LeaseTTL must be positive, got %s", p.LeaseTTL))
	}
	c := *p
	c.Now = q.at(c.Now)
	return &c, nil
}

func (q checked) WorkHeartbeat(ctx context.Context, p *WorkLeaseParams) (*WorkItem, error) {
	c, err := q.lease("heartbeating", p, true)
	if err != nil {
		return nil, err
	}
	return q.Queries.WorkHeartbeat(ctx, c)
}

func (q checked) WorkComplete(ctx context.Context, p *WorkLeaseParams) (*WorkItem, error) {
	c, err := q.lease("completing", p, false)
	if err != nil {
		return nil, err
	}
	return q.Queries.WorkComplete(ctx, c)
}

func (q checked) WorkCompleteMany(ctx context.Context, p *WorkCompleteManyParams) ([]*WorkItem, error) {
	switch {
	case p == nil:
		return nil, invalidf("completing work: params are nil")
	case p.Worker == "":
		return nil, invalidf("completing work: empty Worker")
	case len(p.IDs) == 0:
		return nil, nil
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.WorkCompleteMany(ctx, &c)
}

func (q checked) WorkRelease(ctx context.Context, p *WorkLeaseParams) (*WorkItem, error) {
	c, err := q.lease("releasing", p, false)
	if err != nil {
		return nil, err
	}
	return q.Queries.WorkRelease(ctx, c)
}

func (q checked) WorkFail(ctx context.Context, p *WorkFailParams) (*WorkItem, error) {
	switch {
	case p == nil:
		return nil, invalidf("failing work: params are nil")
	case p.Worker == "":
		return nil, fmt.Errorf("failing work %s: %w", p.ID, invalidf("empty Worker"))
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.RetryAt.IsZero() {
		c.RetryAt = c.Now
	}
	return q.Queries.WorkFail(ctx, &c)
}

func (q checked) WorkReclaim(ctx context.Context, p *WorkReclaimParams) ([]*WorkItem, error) {
	if p == nil || p.Worker == "" {
		return nil, invalidf("reclaiming work: empty Worker")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.WorkReclaim(ctx, &c)
}

func (q checked) WorkList(ctx context.Context, p *WorkListParams) ([]*WorkItem, error) {
	if p == nil {
		p = &WorkListParams{}
	}
	if p.Limit < 0 {
		return nil, invalidf("listing work: negative Limit")
	}
	return q.Queries.WorkList(ctx, p)
}

func (q checked) WorkPrune(ctx context.Context, p *WorkPruneParams) (int, error) {
	if p == nil || p.FinishedBefore.IsZero() {
		return 0, invalidf("pruning work: FinishedBefore is required")
	}
	c := *p
	c.Limit = limitOr(c.Limit, DefaultPruneLimit)
	return q.Queries.WorkPrune(ctx, &c)
}

func (q checked) prune(what string, p *PruneParams) (*PruneParams, error) {
	if p == nil || p.Before.IsZero() {
		return nil, invalidf("pruning %s: Before is required", what)
	}
	c := *p
	c.Limit = limitOr(c.Limit, DefaultPruneLimit)
	return &c, nil
}

func (q checked) InboundPrune(ctx context.Context, p *PruneParams) (int, error) {
	c, err := q.prune("inbound event ids", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.InboundPrune(ctx, c)
}

func (q checked) LeasePrune(ctx context.Context, p *PruneParams) (int, error) {
	c, err := q.prune("named leases", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.LeasePrune(ctx, c)
}

// ---- inbound, agents, bindings, posts ----

func (q checked) InboundRecord(ctx context.Context, p *InboundRecordParams) (bool, error) {
	if p == nil || p.Platform == "" || p.EventID == "" {
		return false, invalidf("recording inbound event: empty Platform or EventID")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.InboundRecord(ctx, &c)
}

func (q checked) AgentUpsert(ctx context.Context, p *AgentUpsertParams) (*Agent, error) {
	if p == nil || p.Name == "" {
		return nil, invalidf("upserting agent: empty Name")
	}
	c := *p
	var err error
	if c.Config, err = jsonOr("Config", c.Config, "{}"); err != nil {
		return nil, fmt.Errorf("upserting agent %s: %w", p.Name, err)
	}
	c.Now = q.at(c.Now)
	return q.Queries.AgentUpsert(ctx, &c)
}

func (q checked) BindingEnsure(ctx context.Context, p *BindingEnsureParams) (*BindingEnsureResult, error) {
	if p == nil {
		return nil, invalidf("ensuring binding: params are nil")
	}
	if err := p.Place.Validate(); err != nil {
		return nil, fmt.Errorf("ensuring binding: %w", err)
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.Conversation.Now.IsZero() {
		c.Conversation.Now = c.Now
	}
	conv, err := q.conversationDefaults(&c.Conversation)
	if err != nil {
		return nil, fmt.Errorf("ensuring binding %s: %w", p.Place, err)
	}
	c.Conversation = *conv
	return q.Queries.BindingEnsure(ctx, &c)
}

func (q checked) BindingFind(ctx context.Context, p *BindingFindParams) (*Binding, error) {
	if p == nil {
		return nil, invalidf("finding binding: params are nil")
	}
	if err := p.Place.Validate(); err != nil {
		return nil, fmt.Errorf("finding binding: %w", err)
	}
	return q.Queries.BindingFind(ctx, p)
}

func (q checked) BindingAdvance(ctx context.Context, p *BindingAdvanceParams) (*Binding, error) {
	if p == nil || p.DeliveredSeq < 0 {
		return nil, invalidf("advancing binding: negative DeliveredSeq")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.BindingAdvance(ctx, &c)
}

func (q checked) PostedRecord(ctx context.Context, p *Posted) error {
	if p == nil {
		return invalidf("recording a post: params are nil")
	}
	c := *p
	c.CreatedAt = q.at(c.CreatedAt)
	return q.Queries.PostedRecord(ctx, &c)
}

func (q checked) PostedGet(ctx context.Context, p *PostedGetParams) (*Posted, error) {
	if p == nil {
		return nil, invalidf("reading a post: params are nil")
	}
	return q.Queries.PostedGet(ctx, p)
}

func (q checked) LiveStreamSave(ctx context.Context, l *LiveStream) error {
	if l == nil {
		return invalidf("saving a live stream: params are nil")
	}
	c := *l
	c.UpdatedAt = q.at(c.UpdatedAt)
	return q.Queries.LiveStreamSave(ctx, &c)
}

// ---- approvals, tool executions, audit, leases, usage ----

func (q checked) ApprovalCreate(ctx context.Context, p *ApprovalCreateParams) (*Approval, error) {
	switch {
	case p == nil:
		return nil, invalidf("creating approval: params are nil")
	case p.Kind != ApprovalConfirm && p.Kind != ApprovalQuestion:
		return nil, fmt.Errorf("creating approval for call %s: %w", p.CallID, invalidf("unknown kind %q", p.Kind))
	case p.CallID == "":
		return nil, invalidf("creating approval: empty CallID")
	case p.ExpiresAt.IsZero():
		return nil, fmt.Errorf("creating approval for call %s: %w", p.CallID, invalidf("zero ExpiresAt"))
	}
	c := *p
	var err error
	if c.Request, err = jsonOr("Request", c.Request, "{}"); err != nil {
		return nil, fmt.Errorf("creating approval for call %s: %w", p.CallID, err)
	}
	if c.Deciders == nil {
		c.Deciders = []string{}
	}
	c.Now = q.at(c.Now)
	return q.Queries.ApprovalCreate(ctx, &c)
}

func (q checked) ApprovalFindByCall(ctx context.Context, p *ApprovalFindByCallParams) (*Approval, error) {
	if p == nil || p.CallID == "" {
		return nil, invalidf("finding approval: empty CallID")
	}
	return q.Queries.ApprovalFindByCall(ctx, p)
}

func (q checked) ApprovalDecide(ctx context.Context, p *ApprovalDecideParams) (*Approval, error) {
	switch {
	case p == nil:
		return nil, invalidf("deciding approval: params are nil")
	case p.Status != ApprovalApproved && p.Status != ApprovalDenied:
		return nil, fmt.Errorf("deciding approval %s: %w", p.ID, invalidf("Status must be approved or denied, got %q", p.Status))
	}
	c := *p
	var err error
	if c.Decision, err = jsonOr("Decision", c.Decision, ""); err != nil {
		return nil, fmt.Errorf("deciding approval %s: %w", p.ID, err)
	}
	c.Now = q.at(c.Now)
	return q.Queries.ApprovalDecide(ctx, &c)
}

func (q checked) ApprovalExpire(ctx context.Context, p *ApprovalExpireParams) ([]*Approval, error) {
	c := ApprovalExpireParams{}
	if p != nil {
		c = *p
	}
	c.Now, c.Limit = q.at(c.Now), limitOr(c.Limit, DefaultListLimit)
	return q.Queries.ApprovalExpire(ctx, &c)
}

func (q checked) ToolExecutionStart(ctx context.Context, p *ToolExecutionStartParams) (*ToolExecutionStartResult, error) {
	if p == nil || p.CallID == "" {
		return nil, invalidf("starting a tool call: empty CallID")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ToolExecutionStart(ctx, &c)
}

func (q checked) ToolExecutionFinish(ctx context.Context, p *ToolExecutionFinishParams) (*ToolExecution, error) {
	if p == nil || p.CallID == "" {
		return nil, invalidf("finishing a tool call: empty CallID")
	}
	c := *p
	switch c.State {
	case "":
		c.State = ToolFinished
	case ToolFinished, ToolInterrupted:
	default:
		return nil, invalidf("finishing tool call %s: State %q must be %q or %q", p.CallID, p.State, ToolFinished, ToolInterrupted)
	}
	c.Now = q.at(c.Now)
	return q.Queries.ToolExecutionFinish(ctx, &c)
}

func (q checked) ToolExecutionGet(ctx context.Context, p *ToolExecutionGetParams) (*ToolExecution, error) {
	if p == nil || p.CallID == "" {
		return nil, invalidf("reading a tool call's marker: empty CallID")
	}
	return q.Queries.ToolExecutionGet(ctx, p)
}

func (q checked) LeaseAcquire(ctx context.Context, p *NamedLeaseParams) (bool, error) {
	switch {
	case p == nil || p.Name == "":
		return false, invalidf("acquiring lease: empty Name")
	case p.Owner == "":
		return false, invalidf("acquiring lease %s: empty Owner", p.Name)
	case p.TTL <= 0:
		return false, invalidf("acquiring lease %s: TTL must be positive, got %s", p.Name, p.TTL)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.LeaseAcquire(ctx, &c)
}

func (q checked) LeaseRelease(ctx context.Context, p *NamedLeaseParams) error {
	if p == nil || p.Name == "" || p.Owner == "" {
		return invalidf("releasing lease: empty Name or Owner")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.LeaseRelease(ctx, &c)
}

func (q checked) UsageRecord(ctx context.Context, u *Usage) error {
	if u == nil {
		return invalidf("recording usage: params are nil")
	}
	c := *u
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	switch c.Kind {
	case "":
		c.Kind = UsageModel
	case UsageModel, UsageTranscription, UsageSpeech:
	default:
		return invalidf("recording usage: Kind %q: want %q, %q or %q", c.Kind, UsageModel, UsageTranscription, UsageSpeech)
	}
	if c.AudioMs < 0 || c.SpeechChars < 0 {
		return invalidf("recording usage: negative AudioMs or SpeechChars")
	}
	c.CreatedAt = q.at(c.CreatedAt)
	if err := q.Queries.UsageRecord(ctx, &c); err != nil {
		return err
	}
	u.ID, u.CreatedAt = c.ID, c.CreatedAt
	return nil
}

// ---- schedules ----

func (q checked) ScheduleCreate(ctx context.Context, p *ScheduleCreateParams) (*Schedule, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("creating schedule: %w", err)
	}
	c := *p
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	var err error
	if c.Config, err = jsonOr("Config", c.Config, "{}"); err != nil {
		return nil, fmt.Errorf("creating schedule %s: %w", p.Name, err)
	}
	if c.Data, err = jsonOr("Data", c.Data, "{}"); err != nil {
		return nil, fmt.Errorf("creating schedule %s: %w", p.Name, err)
	}
	if c.Missed == "" {
		c.Missed = MissedRunOnce
	}
	if c.State == "" {
		c.State = ScheduleActive
	}
	c.Now = q.at(c.Now)
	if c.MaxPerAgent <= 0 {
		return q.Queries.ScheduleCreate(ctx, &c)
	}
	max := c.MaxPerAgent
	c.MaxPerAgent = 0
	var s *Schedule
	err = q.atomic(ctx, func(tq Queries) error {
		n, err := tq.ScheduleCount(ctx, &ScheduleCountParams{Agent: c.Agent, Kind: c.Kind})
		if err != nil {
			return fmt.Errorf("counting %ss of agent %s: %w", c.Kind, c.Agent, err)
		}
		if n >= max {
			// Replacing a schedule that exists adds none: config reloads
			// must not be refused for a full agent.
			exists := false
			if c.Upsert {
				_, err := tq.ScheduleFind(ctx, &ScheduleFindParams{Agent: c.Agent, Kind: c.Kind, Name: c.Name})
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				exists = err == nil
			}
			if !exists {
				return fmt.Errorf("agent %s already has %d %ss (at most %d): %w", c.Agent, n, c.Kind, max, ErrLimit)
			}
		}
		s, err = tq.ScheduleCreate(ctx, &c)
		return err
	})
	return s, err
}

func (p *ScheduleCreateParams) validate() error {
	switch {
	case p == nil:
		return invalidf("params are nil")
	case !p.Kind.Valid():
		return invalidf("Kind %q is not a schedule kind", p.Kind)
	case p.Agent == "":
		return invalidf("Agent is empty")
	case p.Name == "":
		return invalidf("Name is empty")
	case p.Spec == "":
		return invalidf("Spec is empty")
	case p.Missed != "" && !p.Missed.Valid():
		return invalidf("Missed %q must be run_once or skip", p.Missed)
	case p.State != "" && !p.State.Valid():
		return invalidf("State %q is not a schedule state", p.State)
	case p.MaxPerAgent < 0:
		return invalidf("MaxPerAgent %d is negative", p.MaxPerAgent)
	}
	return validSchedulePlace(p.Place)
}

// validSchedulePlace: a schedule delivers to a channel or a DM, never to a
// thread, and its runs get their own Run (Place.Run is not stored).
func validSchedulePlace(p Place) error {
	switch {
	case p.Thread != "":
		return invalidf("Place.Thread %q is set; a schedule delivers to a channel or a DM", p.Thread)
	case p.Run != "":
		return invalidf("Place.Run %q is set; each run of a schedule gets its own", p.Run)
	case p.IsZero():
		return nil
	}
	return p.Validate()
}

func (q checked) ScheduleFind(ctx context.Context, p *ScheduleFindParams) (*Schedule, error) {
	if p == nil || p.Agent == "" || p.Name == "" || !p.Kind.Valid() {
		return nil, invalidf("finding schedule: Agent, Kind and Name are required")
	}
	return q.Queries.ScheduleFind(ctx, p)
}

func (q checked) ScheduleCount(ctx context.Context, p *ScheduleCountParams) (int, error) {
	if p == nil || p.Agent == "" || !p.Kind.Valid() {
		return 0, invalidf("counting schedules: Agent and Kind are required")
	}
	return q.Queries.ScheduleCount(ctx, p)
}

func (q checked) ScheduleList(ctx context.Context, p *ScheduleListParams) ([]*Schedule, error) {
	if p == nil {
		p = &ScheduleListParams{}
	}
	if p.Limit < 0 {
		return nil, invalidf("listing schedules: negative Limit")
	}
	return q.Queries.ScheduleList(ctx, p)
}

func (q checked) ScheduleUpdate(ctx context.Context, p *ScheduleUpdateParams) (*Schedule, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("updating schedule: %w", err)
	}
	c := *p
	var err error
	if c.Config, err = jsonOr("Config", c.Config, ""); err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	if c.Data, err = jsonOr("Data", c.Data, ""); err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	c.Now = q.at(c.Now)
	return q.Queries.ScheduleUpdate(ctx, &c)
}

func (p *ScheduleUpdateParams) validate() error {
	switch {
	case p == nil:
		return invalidf("params are nil")
	case p.Spec != nil && *p.Spec == "":
		return invalidf("Spec is empty")
	case p.Missed != nil && !p.Missed.Valid():
		return invalidf("Missed %q must be run_once or skip", *p.Missed)
	case p.State != nil && !p.State.Valid():
		return invalidf("State %q is not a schedule state", *p.State)
	case p.ExpectState != nil && !p.ExpectState.Valid():
		return invalidf("ExpectState %q is not a schedule state", *p.ExpectState)
	case p.Place != nil:
		return validSchedulePlace(*p.Place)
	}
	return nil
}

func (q checked) ScheduleAdvance(ctx context.Context, p *ScheduleAdvanceParams) (*Schedule, error) {
	if p == nil || p.ExpectNextRunAt.IsZero() {
		return nil, invalidf("advancing schedule: ExpectNextRunAt is zero")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ScheduleAdvance(ctx, &c)
}

func (q checked) ScheduleDue(ctx context.Context, p *ScheduleDueParams) ([]*Schedule, error) {
	c := ScheduleDueParams{}
	if p != nil {
		c = *p
	}
	c.Now, c.Limit = q.at(c.Now), limitOr(c.Limit, DefaultListLimit)
	return q.Queries.ScheduleDue(ctx, &c)
}

func (q checked) ScheduleRunCreate(ctx context.Context, p *ScheduleRunCreateParams) (*ScheduleRun, error) {
	switch {
	case p == nil:
		return nil, invalidf("recording a run: params are nil")
	case !p.Status.Valid():
		return nil, invalidf("recording a run of %s: Status %q is not a run status", p.ScheduleID, p.Status)
	case p.DueAt.IsZero():
		return nil, invalidf("recording a run of %s: DueAt is zero", p.ScheduleID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ScheduleRunCreate(ctx, &c)
}

func (q checked) ScheduleRunUpdate(ctx context.Context, p *ScheduleRunUpdateParams) (*ScheduleRun, error) {
	switch {
	case p == nil:
		return nil, invalidf("updating a run: params are nil")
	case p.Status != nil && !p.Status.Valid():
		return nil, invalidf("updating run %s: Status %q is not a run status", p.ID, *p.Status)
	}
	c := *p
	var err error
	if c.Report, err = jsonOr("Report", c.Report, ""); err != nil {
		return nil, fmt.Errorf("updating run %s: %w", p.ID, err)
	}
	c.Now = q.at(c.Now)
	return q.Queries.ScheduleRunUpdate(ctx, &c)
}

func (q checked) ScheduleRunList(ctx context.Context, p *ScheduleRunListParams) ([]*ScheduleRun, error) {
	if p == nil || p.Limit < 0 {
		return nil, invalidf("listing runs: negative Limit")
	}
	return q.Queries.ScheduleRunList(ctx, p)
}

func (q checked) SchedulePrune(ctx context.Context, p *SchedulePruneParams) (int, error) {
	c, err := q.prune("done reminders", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.SchedulePrune(ctx, c)
}
