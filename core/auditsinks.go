package core

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Audit that leaves the building. Every write of an audit row through the
// service's store, by whatever part of the service makes it (the guard,
// approvals, grants, budgets, retention, sign-ins, keys), goes through
// auditingStore: in the transaction that writes the row it reads the row
// back as an audit.Event and enqueues one WorkAuditDeliver item per
// webhook sink, so no row commits without its deliveries; once the
// transaction commits, the file and OTLP sinks get the event.
//
//	write ─► [audit row + one work item per webhook] ─► commit ─► file, OTLP
//	                              │
//	    worker (any instance) ◄───┘ claim in order per (webhook, conversation)
//	       └─► POST, signed ─► 2xx: complete │ else: retry with backoff
//
// A webhook's items of one conversation share an ordering key, so they are
// posted one at a time in the order their rows were written, each after
// the one before it succeeded (or was given up after max_attempts).

// WorkAuditDeliver posts one audit event to one webhook sink.
const WorkAuditDeliver = "audit_deliver"

// AuditDeliverArgs are the args of a WorkAuditDeliver item: the webhook
// (audit.SinkID of its URL) and the event, as written with its row.
type AuditDeliverArgs struct {
	Sink  string      `json:"sink"`
	Event audit.Event `json:"event"`
}

// Kind is WorkAuditDeliver.
func (AuditDeliverArgs) Kind() string { return WorkAuditDeliver }

// AuditingStore is st whose audit writes also reach sinks (see above);
// with no sink it is st itself. The CLI uses it for the rows it writes
// without a running service (budgets extend), so webhooks get those too.
func AuditingStore(st store.Store, sinks *audit.Sinks, now func() time.Time) store.Store {
	if sinks == nil {
		return st
	}
	if now == nil {
		now = time.Now
	}
	return &auditingStore{Store: st, sh: &shipper{sinks: sinks, now: now}}
}

type shipper struct {
	sinks *audit.Sinks
	now   func() time.Time
}

// ship reads row's write as an event and enqueues its webhook
// deliveries on q, in the write's transaction.
func (sh *shipper) ship(ctx context.Context, q store.Queries, row *store.AuditRecord, evs *[]audit.Event) error {
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("naming the audit event of %s: %w", row.Action, err)
	}
	ev := audit.FromRecord(row, id.String())
	for _, w := range sh.sinks.Webhooks() {
		key := "audit/" + w.ID() + "/" + ev.OrderingKey()
		if _, err := Enqueue(ctx, q, AuditDeliverArgs{Sink: w.ID(), Event: ev}, &EnqueueOpts{
			OrderingKey: &key, MaxAttempts: w.MaxAttempts(), Now: sh.now(),
		}); err != nil {
			return fmt.Errorf("queueing the audit event of %s for %s: %w", row.Action, w.Redacted(), err)
		}
	}
	*evs = append(*evs, ev)
	return nil
}

func (sh *shipper) after(ctx context.Context, evs []audit.Event) {
	for i := range evs {
		sh.sinks.AfterCommit(ctx, &evs[i])
	}
}

// traceOf is the trace ctx runs in, "" outside one.
func traceOf(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

// auditingQueries are a transaction's queries whose audit writes ship.
type auditingQueries struct {
	store.Queries
	sh  *shipper
	evs *[]audit.Event
}

func (q auditingQueries) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	if r.TraceID == "" {
		r.TraceID = traceOf(ctx)
	}
	if err := q.Queries.AuditRecord(ctx, r); err != nil {
		return err
	}
	row, err := q.Queries.AuditGet(ctx, r.ID)
	if err != nil {
		return fmt.Errorf("reading back the audit row of %s: %w", r.Action, err)
	}
	return q.sh.ship(ctx, q.Queries, row, q.evs)
}

func (q auditingQueries) AuditSettle(ctx context.Context, p *store.AuditSettleParams) (*store.AuditRecord, error) {
	if p.TraceID == "" {
		p.TraceID = traceOf(ctx)
	}
	row, err := q.Queries.AuditSettle(ctx, p)
	if err != nil {
		return nil, err
	}
	return row, q.sh.ship(ctx, q.Queries, row, q.evs)
}

func (q auditingQueries) AuditLog(ctx context.Context, p *store.AuditLogParams) (*store.AuditRecord, error) {
	if p.TraceID == "" {
		p.TraceID = traceOf(ctx)
	}
	row, err := q.Queries.AuditLog(ctx, p)
	if err != nil {
		return nil, err
	}
	return row, q.sh.ship(ctx, q.Queries, row, q.evs)
}

// auditingStore is a store whose audit writes ship, in and out of
// transactions.
type auditingStore struct {
	store.Store
	sh *shipper
}

// inTx runs fn in a transaction of run (InTx or InTxGroup) with shipping
// queries, and hands the events of the attempt that committed to the file
// and OTLP sinks.
func (s *auditingStore) inTx(ctx context.Context, run func(context.Context, func(store.Queries) error) error, fn func(store.Queries) error) error {
	var evs []audit.Event
	err := run(ctx, func(q store.Queries) error {
		evs = evs[:0] // fn may run again after a conflict
		return fn(auditingQueries{Queries: q, sh: s.sh, evs: &evs})
	})
	if err == nil {
		s.sh.after(ctx, evs)
	}
	return err
}

func (s *auditingStore) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	return s.inTx(ctx, s.Store.InTx, fn)
}

func (s *auditingStore) InTxGroup(ctx context.Context, fn func(q store.Queries) error) error {
	return s.inTx(ctx, s.Store.InTxGroup, fn)
}

func (s *auditingStore) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	return s.InTx(ctx, func(q store.Queries) error { return q.AuditRecord(ctx, r) })
}

func (s *auditingStore) AuditSettle(ctx context.Context, p *store.AuditSettleParams) (row *store.AuditRecord, err error) {
	err = s.InTx(ctx, func(q store.Queries) error {
		row, err = q.AuditSettle(ctx, p)
		return err
	})
	return row, err
}

func (s *auditingStore) AuditLog(ctx context.Context, p *store.AuditLogParams) (row *store.AuditRecord, err error) {
	err = s.InTx(ctx, func(q store.Queries) error {
		row, err = q.AuditLog(ctx, p)
		return err
	})
	return row, err
}

// DeliverAudit is the WorkAuditDeliver handler: it posts the event to its
// webhook once. An error fails the attempt, and the worker retries it with
// backoff until the sink's max_attempts.
func (s *Service) DeliverAudit(ctx context.Context, item *store.WorkItem, args AuditDeliverArgs) error {
	if s.opts.AuditSinks == nil {
		return fmt.Errorf("delivering audit event %s: no audit sink is configured (audit.sinks in switchboard.yaml)", args.Event.ID)
	}
	last := item.MaxAttempts > 0 && item.Attempts >= item.MaxAttempts
	return s.opts.AuditSinks.Deliver(ctx, args.Sink, &args.Event, last)
}

// AuditExport is a time range of the audit to export; zero bounds are
// open.
type AuditExport struct {
	Since, Until time.Time // Since inclusive, Until exclusive
	// WorkspaceID, when set, exports one workspace's rows.
	WorkspaceID *uuid.UUID
}

// AuditScanner is what the export reads: the store.
type AuditScanner interface {
	AuditScan(ctx context.Context, p *store.AuditScanParams) ([]*store.AuditRecord, error)
}

// ExportAudit writes the rows created in the range to w as JSON lines,
// oldest first, each an audit.Event (with no event id: a row as it
// stands), and returns how many it wrote. The CLI runs it on the database,
// Service.ExportAudit once it checked the caller.
func ExportAudit(ctx context.Context, st AuditScanner, x *AuditExport, w io.Writer) (int, error) {
	if !x.Since.IsZero() && !x.Until.IsZero() && !x.Since.Before(x.Until) {
		return 0, invalid("exporting the audit: since (%s) must be before until (%s)", x.Since.Format(time.RFC3339), x.Until.Format(time.RFC3339))
	}
	p := &store.AuditScanParams{From: x.Since, To: x.Until, WorkspaceID: x.WorkspaceID, Limit: store.MaxAuditLimit}
	enc := json.NewEncoder(w)
	n := 0
	for {
		rows, err := st.AuditScan(ctx, p)
		if err != nil {
			return n, fmt.Errorf("reading the audit: %w", err)
		}
		for _, r := range rows {
			if err := enc.Encode(audit.FromRecord(r, "")); err != nil {
				return n, fmt.Errorf("writing the export: %w", err)
			}
			n++
		}
		if len(rows) < p.Limit {
			return n, nil
		}
		p.After = store.CursorOf(rows[len(rows)-1])
	}
}

// ExportAudit writes a time range of the audit to w for a (see
// ExportAudit): the operator exports the whole audit; a person one
// workspace's rows, where they are an owner or admin.
func (s *Service) ExportAudit(ctx context.Context, a workspace.Actor, x *AuditExport, w io.Writer) (int, error) {
	if !a.Operator {
		if a.Person == uuid.Nil || x.WorkspaceID == nil {
			return 0, workspace.Forbidden("only the operator may export the whole audit; a workspace's owners and admins export its rows with ?workspace=WORKSPACE_ID")
		}
		if err := workspace.Rights(ctx, s.st, a, x.WorkspaceID, workspace.Decide); err != nil {
			return 0, workspace.Forbidden(fmt.Sprintf("exporting the audit of workspace %s takes its owner or an admin", *x.WorkspaceID))
		}
	}
	return ExportAudit(ctx, s.st, x, w)
}

// ParseAuditTime reads a bound of an export: an RFC 3339 time, a UTC day
// (2026-12-01), or a duration before now (24h, 90m).
func ParseAuditTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, invalid("%q is not a time: give RFC 3339 (2026-12-01T09:00:00Z), a UTC day (2026-12-01) or a duration before now (24h)", s)
}
