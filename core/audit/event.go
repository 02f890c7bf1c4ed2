// Package audit ships the audit beyond the database: the one JSON shape of
// an audit row (Event) that every sink and the export write, the HMAC
// signature of a webhook delivery, and the sinks themselves (a JSON-lines
// file with rotation, a webhook, OTLP logs).
//
// Core writes the rows (store.AuditQueries) and decides when a sink sees
// one: a webhook's delivery is a work item committed with the row
// (core/auditsinks.go), so it survives a crash; a file and OTLP are
// written after the commit by the instance that wrote the row.
//
// What happens on failure: a webhook that does not answer 2xx fails the
// work item's attempt, and the queue retries it with backoff (1 s doubling
// to 5 min) until the sink's max_attempts; items of one conversation wait
// behind it, so they arrive in order. A crash between the receiver's 2xx
// and the item's completion sends that row again with the same id (the
// receiver's dedupe key). A file or OTLP write that fails is logged and
// counted, not retried, and a crash between the commit and the write
// loses it there: the export (switchboard audit export) reads every row
// from the database.
package audit

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Schema names the shape of Event; a change that is not an addition gets a
// new one.
const Schema = "switchboard.audit.v1"

// Event is one audit row as sinks receive it and the export writes it:
// who did what, where, with what outcome, in which trace.
//
// A sink receives one Event per write of a row: a call the guard lets
// through gives one (its outcome), a call that waits for a person gives
// two (pending, then its outcome), each with an ID of its own and the
// row's RowID. The export reads rows as they stand: one Event a row, with
// no ID.
type Event struct {
	Schema string `json:"schema"`
	// ID names this write of the row (a UUIDv7, so it sorts by time); a
	// receiver dedupes on it. Empty in an export.
	ID string `json:"id,omitempty"`
	// RowID is the audit row (switchboard audit, GET /api/audit).
	RowID uuid.UUID `json:"row_id"`
	// Time is when this write happened (the row's last update).
	Time time.Time `json:"time"`
	// CreatedAt is when the row was first written.
	CreatedAt time.Time `json:"created_at"`

	// Who: the actor ("agent:NAME", "user:ID", "operator", "system", a
	// principal), the agent whose call it is, and who decided it (a
	// person's author, "policy", "grant", "system").
	Actor     string `json:"actor"`
	Agent     string `json:"agent,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"`

	// What: the action (a tool's name, model_call, budget_extend,
	// retention, forget_person, ...), the model's call id, the declared
	// risk and the guard's decision (auto, notify, confirm, deny, budget,
	// extend).
	Action   string `json:"action"`
	CallID   string `json:"call_id,omitempty"`
	Risk     string `json:"risk,omitempty"`
	Decision string `json:"decision,omitempty"`

	// Where: the Switchboard workspace and the conversation.
	WorkspaceID    *uuid.UUID `json:"workspace_id,omitempty"`
	ConversationID *uuid.UUID `json:"conversation_id,omitempty"`

	// Outcome is pending, ok, failed, denied, expired or cancelled.
	Outcome string `json:"outcome"`
	// TraceID is the OpenTelemetry trace (32 hex digits) of the request or
	// turn that wrote the row, when it ran in one.
	TraceID string `json:"trace_id,omitempty"`
	// Detail is what the action recorded (arguments, counts, limits).
	Detail json.RawMessage `json:"detail,omitempty"`
}

// FromRecord is r as an Event; id is the write's id ("" in an export).
func FromRecord(r *store.AuditRecord, id string) Event {
	e := Event{
		Schema: Schema, ID: id, RowID: r.ID, Time: r.UpdatedAt.UTC(), CreatedAt: r.CreatedAt.UTC(),
		Actor: r.Actor, Agent: r.Agent, DecidedBy: r.DecidedBy,
		Action: r.Action, CallID: r.CallID, Risk: r.Risk, Decision: r.Decision,
		WorkspaceID: r.WorkspaceID, ConversationID: r.ConversationID,
		Outcome: string(r.Outcome), TraceID: r.TraceID,
	}
	if len(r.Detail) > 0 && string(r.Detail) != "{}" && string(r.Detail) != "null" {
		e.Detail = r.Detail
	}
	if e.Time.IsZero() {
		e.Time = e.CreatedAt
	}
	return e
}

// OrderingKey is the part of a sink's ordering key that keeps one
// conversation's rows in order: its id, or "-" for rows of none.
func (e *Event) OrderingKey() string {
	if e.ConversationID == nil {
		return "-"
	}
	return e.ConversationID.String()
}
