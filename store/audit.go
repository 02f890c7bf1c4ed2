package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The audit of guarded tool calls: one row per call, keyed by its
// conversation and call id, written when the guard decides and updated as
// the call's outcome becomes known.
//
//	           ┌──────────── ok / failed (the handler ran)
//	pending ───┼──────────── denied (a person said no)
//	(waits for │──────────── expired (nobody answered in time)
//	 a person  └──────────── cancelled (the person moved on)
//	 or client)
//
// A call the guard lets through or refuses at once is written with its
// final outcome straight away.

// AuditOutcome is where a guarded call ended, or pending while it waits.
type AuditOutcome string

const (
	AuditPending   AuditOutcome = "pending"   // waits for a person's decision or a client's result
	AuditOK        AuditOutcome = "ok"        // ran and succeeded
	AuditFailed    AuditOutcome = "failed"    // ran (or was started) and failed
	AuditDenied    AuditOutcome = "denied"    // refused by the policy or by a person
	AuditExpired   AuditOutcome = "expired"   // nobody decided before the approval expired
	AuditCancelled AuditOutcome = "cancelled" // made moot: the person wrote something else
)

// Valid reports whether o is one of the known outcomes.
func (o AuditOutcome) Valid() bool {
	switch o {
	case AuditPending, AuditOK, AuditFailed, AuditDenied, AuditExpired, AuditCancelled:
		return true
	}
	return false
}

// Who decides a call, besides a person (whose Author string is stored).
const (
	DecidedByPolicy = "policy" // the guard's policy decided alone
	DecidedByGrant  = "grant"  // a standing grant allowed it
	DecidedBySystem = "system" // nobody did: an expiry, a person who moved on
)

// AuditRecord is one guarded tool call: who, what, the risk, the guard's
// decision, who decided and the outcome.
type AuditRecord struct {
	ID             uuid.UUID
	ConversationID *uuid.UUID
	// CallID is the model's id of the call; with ConversationID it names
	// the row. Empty only on rows written before calls had one row each.
	CallID    string
	Agent     string // the agent's name
	Actor     string // who asked: the agent's Author
	Action    string // the tool name
	Risk      string
	Decision  string // the guard's: auto, notify, confirm, deny
	Outcome   AuditOutcome
	DecidedBy string // a person's Author, DecidedByPolicy, DecidedByGrant, DecidedBySystem; "" while nobody has
	Detail    json.RawMessage
	CreatedAt time.Time // when the call was made; the list's order
	UpdatedAt time.Time // when the outcome was last written
	// WorkspaceID is stamped from the conversation when the row is made.
	WorkspaceID *uuid.UUID
	// TraceID is the OpenTelemetry trace (32 hex digits) of the request or
	// turn that last wrote the row; "" when it ran in none. A later record
	// without one keeps the earlier.
	TraceID string
}

// AuditSettleParams records a call's outcome on its existing row.
type AuditSettleParams struct {
	ConversationID uuid.UUID
	CallID         string
	Outcome        AuditOutcome
	// DecidedBy, when not empty, replaces who decided.
	DecidedBy string
	// Detail, when set, replaces the detail.
	Detail json.RawMessage
	// TraceID, when not empty, replaces the row's trace id.
	TraceID string
	Now     time.Time
}

// AuditListParams filters and pages the audit, newest first. Empty fields
// filter nothing.
type AuditListParams struct {
	// Workspace is the platform workspace (Slack team, Discord guild) of a
	// binding of the call's conversation.
	Workspace string
	// WorkspaceID is the Switchboard workspace the row carries.
	WorkspaceID    *uuid.UUID
	Agent          string
	ConversationID *uuid.UUID
	Action         string // the tool
	Decision       string
	Outcome        AuditOutcome
	From           time.Time // inclusive; zero for no lower bound
	To             time.Time // exclusive; zero for no upper bound
	// After continues a list: rows older than the cursor's row.
	After *AuditCursor
	Limit int // 0 means DefaultAuditLimit; at most MaxAuditLimit
}

// Limits of one page of the audit.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 500
)

// AuditCursor is the place in the audit's order (CreatedAt, ID descending)
// that a next page continues after.
type AuditCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// CursorOf is the cursor that continues after r.
func CursorOf(r *AuditRecord) *AuditCursor { return &AuditCursor{CreatedAt: r.CreatedAt, ID: r.ID} }

// String is the cursor as an opaque token for clients.
func (c *AuditCursor) String() string {
	raw := strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "." + c.ID.String()
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseAuditCursor reads a token made by AuditCursor.String.
func ParseAuditCursor(s string) (*AuditCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, invalidf("malformed audit cursor")
	}
	at, id, ok := strings.Cut(string(raw), ".")
	us, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil {
		return nil, invalidf("malformed audit cursor")
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, invalidf("malformed audit cursor")
	}
	return &AuditCursor{CreatedAt: time.UnixMicro(us).UTC(), ID: u}, nil
}

// Actions of the audit rows that record what the operator or the system
// did, not a tool call (AuditLog).
const (
	// AuditRetention: a retention sweep of one workspace deleted (or
	// failed to export) conversations; the detail holds the counts.
	AuditRetention = "retention"
	// AuditForgetPerson: a person's data was deleted on request; the
	// detail holds the person's id and the counts, nothing else of theirs.
	AuditForgetPerson = "forget_person"
)

// AuditLogParams writes an audit row that names no tool call: an action
// of the operator or the system (AuditRetention, AuditForgetPerson).
type AuditLogParams struct {
	Action      string // required
	Actor       string // who did it: "system", "operator", a principal's name; required
	Outcome     AuditOutcome
	WorkspaceID *uuid.UUID
	Detail      json.RawMessage // optional; "{}" when nil
	TraceID     string          // optional: the trace of the request that did it
	Now         time.Time

	ID uuid.UUID // filled in by the rules (UUIDv7); callers leave it zero
}

// AuditScanParams reads a time range of the audit oldest first (CreatedAt,
// then ID), a page at a time: the export.
type AuditScanParams struct {
	From time.Time // inclusive; zero for no lower bound
	To   time.Time // exclusive; zero for no upper bound
	// WorkspaceID, when set, keeps the rows of one workspace.
	WorkspaceID *uuid.UUID
	// After continues a scan: rows after the cursor's row.
	After *AuditCursor
	Limit int // 0 means DefaultAuditLimit; at most MaxAuditLimit
}

// AuditQueries are the audit's reads and writes.
type AuditQueries interface {
	// AuditRecord writes a call's row: inserted the first time, and on a
	// later record of the same (ConversationID, CallID) its outcome,
	// detail and updated time are replaced, and its decision, risk and
	// DecidedBy too when given (not empty). Who asked, the tool and CreatedAt stay as
	// first written. ID is set on r to the row's (the first record's on a
	// later one); CreatedAt and UpdatedAt to what this record wrote.
	AuditRecord(ctx context.Context, r *AuditRecord) error
	// AuditGet reads one row; ErrNotFound when there is none.
	AuditGet(ctx context.Context, id uuid.UUID) (*AuditRecord, error)
	// AuditScan reads a time range oldest first (CreatedAt, then ID).
	AuditScan(ctx context.Context, p *AuditScanParams) ([]*AuditRecord, error)
	// AuditSettle records an outcome on a call's existing row;
	// ErrNotFound when the call has none.
	AuditSettle(ctx context.Context, p *AuditSettleParams) (*AuditRecord, error)
	// AuditList lists rows newest first (CreatedAt, then ID, descending).
	AuditList(ctx context.Context, p *AuditListParams) ([]*AuditRecord, error)
	// AuditLog writes a row of its own for an action that is no tool call
	// (no conversation, no call id); DecidedBy is the actor.
	AuditLog(ctx context.Context, p *AuditLogParams) (*AuditRecord, error)
}
