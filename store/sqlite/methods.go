package sqlite

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// The Store's own methods: writes run in a transaction of their own on the
// writer and notify after it commits; plain reads go to the read pool.

func (s *Store) ConversationCreate(ctx context.Context, p *store.ConversationCreateParams) (*store.Conversation, error) {
	return write(ctx, s, false, func(q *queries) (*store.Conversation, error) { return q.ConversationCreate(ctx, p) })
}

func (s *Store) ConversationGet(ctx context.Context, id uuid.UUID) (*store.Conversation, error) {
	return s.reader().ConversationGet(ctx, id)
}

func (s *Store) ConversationForks(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	return s.reader().ConversationForks(ctx, id)
}

func (s *Store) ConversationLineage(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	return s.reader().ConversationLineage(ctx, id)
}

func (s *Store) ConversationSetStatus(ctx context.Context, p *store.ConversationStatusParams) (*store.Conversation, error) {
	return write(ctx, s, false, func(q *queries) (*store.Conversation, error) { return q.ConversationSetStatus(ctx, p) })
}

func (s *Store) ConversationLeaseAcquire(ctx context.Context, p *store.ConversationLeaseParams) (*store.Conversation, error) {
	return write(ctx, s, false, func(q *queries) (*store.Conversation, error) { return q.ConversationLeaseAcquire(ctx, p) })
}

func (s *Store) ConversationLeaseRelease(ctx context.Context, p *store.ConversationLeaseParams) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.ConversationLeaseRelease(ctx, p) })
	return err
}

func (s *Store) ConversationListExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*store.Conversation, error) {
	return s.reader().ConversationListExpiredLeases(ctx, now, limit)
}

func (s *Store) EntryAppend(ctx context.Context, p *store.EntryAppendParams) (*store.EntryAppendResult, error) {
	return write(ctx, s, false, func(q *queries) (*store.EntryAppendResult, error) { return q.EntryAppend(ctx, p) })
}

func (s *Store) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	return s.reader().EntryList(ctx, p)
}

func (s *Store) EntryGet(ctx context.Context, id uuid.UUID) (*store.Entry, error) {
	return s.reader().EntryGet(ctx, id)
}

func (s *Store) EntryDiscard(ctx context.Context, p *store.EntryDiscardParams) (int, error) {
	return write(ctx, s, false, func(q *queries) (int, error) { return q.EntryDiscard(ctx, p) })
}

func (s *Store) EntryListDiscarded(ctx context.Context, conversationID uuid.UUID) ([]*store.DiscardedEntry, error) {
	return s.reader().EntryListDiscarded(ctx, conversationID)
}

func (s *Store) WorkEnqueue(ctx context.Context, p *store.WorkEnqueueParams) (*store.WorkEnqueueResult, error) {
	return write(ctx, s, false, func(q *queries) (*store.WorkEnqueueResult, error) { return q.WorkEnqueue(ctx, p) })
}

func (s *Store) WorkClaim(ctx context.Context, p *store.WorkClaimParams) ([]*store.WorkItem, error) {
	return write(ctx, s, false, func(q *queries) ([]*store.WorkItem, error) { return q.WorkClaim(ctx, p) })
}

func (s *Store) WorkHeartbeat(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	return write(ctx, s, false, func(q *queries) (*store.WorkItem, error) { return q.WorkHeartbeat(ctx, p) })
}

func (s *Store) WorkComplete(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	return write(ctx, s, false, func(q *queries) (*store.WorkItem, error) { return q.WorkComplete(ctx, p) })
}

func (s *Store) WorkFail(ctx context.Context, p *store.WorkFailParams) (*store.WorkItem, error) {
	return write(ctx, s, false, func(q *queries) (*store.WorkItem, error) { return q.WorkFail(ctx, p) })
}

func (s *Store) WorkCancel(ctx context.Context, id uuid.UUID, now time.Time) (*store.WorkItem, error) {
	return write(ctx, s, false, func(q *queries) (*store.WorkItem, error) { return q.WorkCancel(ctx, id, now) })
}

func (s *Store) WorkGet(ctx context.Context, id uuid.UUID) (*store.WorkItem, error) {
	return s.reader().WorkGet(ctx, id)
}

func (s *Store) WorkList(ctx context.Context, p *store.WorkListParams) ([]*store.WorkItem, error) {
	return s.reader().WorkList(ctx, p)
}

func (s *Store) WorkPrune(ctx context.Context, p *store.WorkPruneParams) (int, error) {
	return write(ctx, s, false, func(q *queries) (int, error) { return q.WorkPrune(ctx, p) })
}

func (s *Store) InboundRecord(ctx context.Context, p *store.InboundRecordParams) (bool, error) {
	return write(ctx, s, false, func(q *queries) (bool, error) { return q.InboundRecord(ctx, p) })
}

func (s *Store) AgentUpsert(ctx context.Context, p *store.AgentUpsertParams) (*store.Agent, error) {
	return write(ctx, s, false, func(q *queries) (*store.Agent, error) { return q.AgentUpsert(ctx, p) })
}

func (s *Store) AgentGetByName(ctx context.Context, name string) (*store.Agent, error) {
	return s.reader().AgentGetByName(ctx, name)
}

func (s *Store) AgentList(ctx context.Context) ([]*store.Agent, error) {
	return s.reader().AgentList(ctx)
}

func (s *Store) BindingEnsure(ctx context.Context, p *store.BindingEnsureParams) (*store.BindingEnsureResult, error) {
	return write(ctx, s, false, func(q *queries) (*store.BindingEnsureResult, error) { return q.BindingEnsure(ctx, p) })
}

func (s *Store) BindingFind(ctx context.Context, platform, workspace, channel, thread string) (*store.Binding, error) {
	return s.reader().BindingFind(ctx, platform, workspace, channel, thread)
}

func (s *Store) BindingListByConversation(ctx context.Context, conversationID uuid.UUID) ([]*store.Binding, error) {
	return s.reader().BindingListByConversation(ctx, conversationID)
}

func (s *Store) BindingAdvance(ctx context.Context, p *store.BindingAdvanceParams) (*store.Binding, error) {
	return write(ctx, s, false, func(q *queries) (*store.Binding, error) { return q.BindingAdvance(ctx, p) })
}

func (s *Store) PostedRecord(ctx context.Context, p *store.Posted) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.PostedRecord(ctx, p) })
	return err
}

func (s *Store) PostedGet(ctx context.Context, bindingID, entryID uuid.UUID) (*store.Posted, error) {
	return s.reader().PostedGet(ctx, bindingID, entryID)
}

func (s *Store) LiveStreamSave(ctx context.Context, l *store.LiveStream) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.LiveStreamSave(ctx, l) })
	return err
}

func (s *Store) LiveStreamGet(ctx context.Context, bindingID uuid.UUID) (*store.LiveStream, error) {
	return s.reader().LiveStreamGet(ctx, bindingID)
}

func (s *Store) LiveStreamDelete(ctx context.Context, bindingID uuid.UUID) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.LiveStreamDelete(ctx, bindingID) })
	return err
}

func (s *Store) ApprovalCreate(ctx context.Context, p *store.ApprovalCreateParams) (*store.Approval, error) {
	return write(ctx, s, false, func(q *queries) (*store.Approval, error) { return q.ApprovalCreate(ctx, p) })
}

func (s *Store) ApprovalGet(ctx context.Context, id uuid.UUID) (*store.Approval, error) {
	return s.reader().ApprovalGet(ctx, id)
}

func (s *Store) ApprovalFindByCall(ctx context.Context, conversationID uuid.UUID, callID string) (*store.Approval, error) {
	return s.reader().ApprovalFindByCall(ctx, conversationID, callID)
}

func (s *Store) ApprovalListPending(ctx context.Context, conversationID uuid.UUID) ([]*store.Approval, error) {
	return s.reader().ApprovalListPending(ctx, conversationID)
}

func (s *Store) ApprovalDecide(ctx context.Context, p *store.ApprovalDecideParams) (*store.Approval, error) {
	return write(ctx, s, false, func(q *queries) (*store.Approval, error) { return q.ApprovalDecide(ctx, p) })
}

func (s *Store) ApprovalExpire(ctx context.Context, now time.Time, limit int) ([]*store.Approval, error) {
	return write(ctx, s, false, func(q *queries) ([]*store.Approval, error) { return q.ApprovalExpire(ctx, now, limit) })
}

func (s *Store) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.AuditRecord(ctx, r) })
	return err
}

func (s *Store) AuditList(ctx context.Context, conversationID uuid.UUID) ([]*store.AuditRecord, error) {
	return s.reader().AuditList(ctx, conversationID)
}

func (s *Store) LeaseAcquire(ctx context.Context, p *store.NamedLeaseParams) (bool, error) {
	return write(ctx, s, false, func(q *queries) (bool, error) { return q.LeaseAcquire(ctx, p) })
}

func (s *Store) LeaseRelease(ctx context.Context, p *store.NamedLeaseParams) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.LeaseRelease(ctx, p) })
	return err
}

func (s *Store) UsageRecord(ctx context.Context, u *store.Usage) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.UsageRecord(ctx, u) })
	return err
}

func (s *Store) UsageList(ctx context.Context, conversationID uuid.UUID) ([]*store.Usage, error) {
	return s.reader().UsageList(ctx, conversationID)
}

func (s *Store) WorkRelease(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	return write(ctx, s, false, func(q *queries) (*store.WorkItem, error) { return q.WorkRelease(ctx, p) })
}

func (s *Store) WorkReclaim(ctx context.Context, p *store.WorkReclaimParams) ([]*store.WorkItem, error) {
	return write(ctx, s, false, func(q *queries) ([]*store.WorkItem, error) { return q.WorkReclaim(ctx, p) })
}

func (s *Store) ToolExecutionStart(ctx context.Context, p *store.ToolExecutionStartParams) (*store.ToolExecutionStartResult, error) {
	return write(ctx, s, false, func(q *queries) (*store.ToolExecutionStartResult, error) { return q.ToolExecutionStart(ctx, p) })
}

func (s *Store) ToolExecutionFinish(ctx context.Context, p *store.ToolExecutionFinishParams) (*store.ToolExecution, error) {
	return write(ctx, s, false, func(q *queries) (*store.ToolExecution, error) { return q.ToolExecutionFinish(ctx, p) })
}

func (s *Store) ToolExecutionGet(ctx context.Context, conversationID uuid.UUID, callID string) (*store.ToolExecution, error) {
	return s.reader().ToolExecutionGet(ctx, conversationID, callID)
}
