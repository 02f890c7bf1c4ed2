package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Conversions between the store's values and the columns: timestamps are
// INTEGER unix microseconds, JSON is TEXT, ids are TEXT UUIDs (sqlc reads
// and writes those as uuid.UUID already).

// newID returns a time-ordered UUID (v7), which keeps inserts at the end of
// the primary key index.
func newID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.New()
	}
	return id
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

func microsArg(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(*t), Valid: true}
}

func nullUUID(v uuid.NullUUID) *uuid.UUID {
	if !v.Valid {
		return nil
	}
	return &v.UUID
}

func uuidArg(id *uuid.UUID) uuid.NullUUID {
	if id == nil {
		return uuid.NullUUID{}
	}
	return uuid.NullUUID{UUID: *id, Valid: true}
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// textArg is an optional string-like value: NULL for nil.
func textArg[T ~string](p *T) sql.NullString {
	if p == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: string(*p), Valid: true}
}

// jsonArg is optional JSON: NULL for none.
func jsonArg(raw json.RawMessage) sql.NullString {
	return sql.NullString{String: string(raw), Valid: len(raw) > 0}
}

// listArg is a JSON array for json_each: NULL for an empty list, which the
// queries read as "any".
func listArg[T ~string](vs []T) sql.NullString {
	if len(vs) == 0 {
		return sql.NullString{}
	}
	b, _ := json.Marshal(vs) // strings always encode
	return sql.NullString{String: string(b), Valid: true}
}

// idsArg encodes message ids, never NULL.
func idsArg(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func decodeIDs(raw, what string) ([]string, error) {
	var ids []string
	if err := json.Unmarshal([]byte(raw), &ids); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", what, err)
	}
	return ids, nil
}

// limitArg maps "0 means no limit" to SQLite's LIMIT -1.
func limitArg(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}

// all converts every row.
func all[R, T any](rows []R, err error, conv func(R) T) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = conv(r)
	}
	return out, nil
}

func conversation(r dbsqlc.Conversation) *store.Conversation {
	return &store.Conversation{
		ID: r.ID, ParentID: nullUUID(r.ParentID), RootID: r.RootID, ForkSeq: nullInt(r.ForkSeq),
		ChildCount: int(r.ChildCount), AgentID: nullUUID(r.AgentID), WorkspaceID: nullUUID(r.WorkspaceID),
		Title: r.Title, TitleAuto: r.TitleAuto != 0, Provider: r.Provider, Model: r.Model, Thinking: r.Thinking,
		Status: store.ConversationStatus(r.Status), Metadata: json.RawMessage(r.Metadata),
		LeaseOwner: r.LeaseOwner, LeaseExpiresAt: nullMicros(r.LeaseExpiresAt), HeartbeatAt: nullMicros(r.HeartbeatAt),
		TurnAttempts: int(r.TurnAttempts), LastSeq: r.LastSeq, ContentRev: r.ContentRev,
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func entry(r dbsqlc.Entry) *store.Entry {
	return &store.Entry{
		ID: r.ID, ConversationID: r.ConversationID, Seq: nullInt(r.Seq), AfterSeq: r.AfterSeq,
		Kind: store.EntryKind(r.Kind), Author: store.Author(r.Author), Content: json.RawMessage(r.Content),
		TurnID: nullUUID(r.TurnID), CreatedAt: fromMicros(r.CreatedAt),
	}
}

func work(r dbsqlc.Work) *store.WorkItem {
	w := &store.WorkItem{
		ID: r.ID, Kind: r.Kind, Payload: json.RawMessage(r.Payload),
		ConversationID: nullUUID(r.ConversationID), AgentID: nullUUID(r.AgentID),
		RunAt: fromMicros(r.RunAt), Priority: int(r.Priority), Attempts: int(r.Attempts), MaxAttempts: int(r.MaxAttempts),
		State: store.WorkState(r.State), ClaimedBy: r.ClaimedBy, LeaseExpiresAt: nullMicros(r.LeaseExpiresAt),
		LastError: r.LastError, CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
		FinishedAt: nullMicros(r.FinishedAt),
	}
	if r.UniqueKey.Valid {
		w.UniqueKey = &r.UniqueKey.String
	}
	if r.OrderingKey.Valid {
		w.OrderingKey = &r.OrderingKey.String
	}
	return w
}

func binding(r dbsqlc.Binding) *store.Binding {
	return &store.Binding{
		ID: r.ID, ConversationID: r.ConversationID,
		Place:        store.PlaceFromColumns(r.Platform, r.Workspace, r.Channel, r.Thread),
		DeliveredSeq: r.DeliveredSeq, CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func approval(r dbsqlc.Approval) (*store.Approval, error) {
	deciders, err := decodeIDs(r.Deciders, "deciders")
	if err != nil {
		return nil, err
	}
	a := &store.Approval{
		ID: r.ID, ConversationID: r.ConversationID, CallID: r.CallID, Tool: r.Tool,
		Kind: store.ApprovalKind(r.Kind), Risk: r.Risk, Request: json.RawMessage(r.Request),
		Deciders: deciders, Status: store.ApprovalStatus(r.Status), DecidedBy: r.DecidedBy,
		ExpiresAt: fromMicros(r.ExpiresAt), DecidedAt: nullMicros(r.DecidedAt), CreatedAt: fromMicros(r.CreatedAt),
	}
	if r.Decision.Valid {
		a.Decision = json.RawMessage(r.Decision.String)
	}
	return a, nil
}

func toolExecution(r dbsqlc.ToolExecution) *store.ToolExecution {
	return &store.ToolExecution{
		ConversationID: r.ConversationID, CallID: r.CallID, State: store.ToolExecutionState(r.State),
		StartedAt: fromMicros(r.StartedAt), FinishedAt: nullMicros(r.FinishedAt),
	}
}

func schedule(r dbsqlc.Schedule) *store.Schedule {
	return &store.Schedule{
		ID: r.ID, Kind: store.ScheduleKind(r.Kind), Agent: r.Agent, Name: r.Name, Owner: r.Owner,
		Place: store.PlaceFromColumns(r.Platform, r.Workspace, r.Channel, ""),
		Spec:  r.Spec, TimeZone: r.TimeZone, Instruction: r.Instruction,
		Config: json.RawMessage(r.Config), Data: json.RawMessage(r.Data),
		Missed: store.MissedPolicy(r.Missed), Source: r.Source,
		State: store.ScheduleState(r.State), StateReason: r.StateReason,
		NextRunAt: nullMicros(r.NextRunAt), LastRunAt: nullMicros(r.LastRunAt), Runs: r.Runs,
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func scheduleRun(r dbsqlc.ScheduleRun) *store.ScheduleRun {
	run := &store.ScheduleRun{
		ID: r.ID, ScheduleID: r.ScheduleID, Seq: r.Seq, DueAt: fromMicros(r.DueAt),
		ConversationID: nullUUID(r.ConversationID), Status: store.ScheduleRunStatus(r.Status),
		InputHash: r.InputHash, Note: r.Note, CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
	if r.Report.Valid {
		run.Report = json.RawMessage(r.Report.String)
	}
	return run
}

func intArg(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}
