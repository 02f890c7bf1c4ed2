package matrix

import (
	"context"
	"errors"
	"fmt"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Backoff of the sync loop after an error.
const (
	syncFirstWait = time.Second
	syncMaxWait   = 30 * time.Second
	// batchAttempts is how often a batch whose events core could not take
	// is synced again before it is passed.
	batchAttempts = 3
)

// syncLoop syncs while this instance holds the lease. Each round renews
// the lease first, so a sync is never held open past it.
func (a *Adapter) syncLoop(ctx context.Context) {
	wait := syncFirstWait
	leading := false
	failed := 0 // rounds in a row whose batch core could not take
	for ctx.Err() == nil {
		ok, err := a.opts.Sync.Lead(ctx, a.opts.LeaseTTL)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.WarnContext(ctx, "cannot reach the matrix sync lease; not syncing", "err", err)
			ok = false
		}
		if ok != leading {
			leading = ok
			if ok {
				a.log.InfoContext(ctx, "this instance now syncs matrix")
			} else {
				a.log.InfoContext(ctx, "another instance syncs matrix")
			}
		}
		if !ok {
			if !sleep(ctx, a.opts.LeaseTTL/3) {
				return
			}
			continue
		}
		err = a.syncOnce(ctx, failed >= batchAttempts-1)
		var held errBatchHeld
		switch {
		case err == nil:
			wait, failed = syncFirstWait, 0
			continue
		case ctx.Err() != nil:
			return
		case errors.As(err, &held):
			failed++
		default:
			failed = 0
		}
		if d, ok := retryAfter(err); ok {
			wait = d
		}
		a.log.WarnContext(ctx, "matrix sync failed", "retry_in", wait, "err", err)
		if !sleep(ctx, wait) {
			return
		}
		wait = min(wait*2, syncMaxWait)
	}
}

// errBatchHeld: core could not take an event of the batch; its token was
// not saved, so the next round syncs it again.
type errBatchHeld struct{ err error }

func (e errBatchHeld) Error() string { return "handing a batch to core: " + e.err.Error() }
func (e errBatchHeld) Unwrap() error { return e.err }

// syncOnce syncs from the saved token, hands the batch to core and saves
// the next token. With pass set, a batch core cannot take is passed (the
// error logged) instead of held.
func (a *Adapter) syncOnce(ctx context.Context, pass bool) error {
	since, err := a.opts.Sync.Cursor(ctx)
	if err != nil {
		return fmt.Errorf("reading the saved sync token: %w", err)
	}
	req := mautrix.ReqSync{Since: since, Timeout: int(a.opts.SyncTimeout.Milliseconds())}
	first := since == ""
	if first {
		// No token: the bot is new here. Take the invites, skip history.
		req.Timeout = 0
	}
	resp, err := a.cli.FullSyncRequest(ctx, req)
	if err != nil {
		return fmt.Errorf("syncing: %w", err)
	}
	if err := a.handleBatch(ctx, resp, first); err != nil {
		if !pass {
			return errBatchHeld{err}
		}
		a.log.ErrorContext(ctx, "matrix events core could not take after several tries; passing them", "err", err)
	}
	if resp.NextBatch == "" || resp.NextBatch == since {
		return nil
	}
	if err := a.opts.Sync.SaveCursor(ctx, resp.NextBatch); err != nil {
		return fmt.Errorf("saving the sync token: %w", err)
	}
	return nil
}

// handleBatch takes the invites and, unless first, the timeline events of
// one sync response, room by room in order. It returns the first error
// core gave (the rest are still handled: they are deduped when the batch
// comes again).
func (a *Adapter) handleBatch(ctx context.Context, resp *mautrix.RespSync, first bool) error {
	var errs []error
	for _, ev := range resp.AccountData.Events {
		if ev != nil && ev.Type == event.AccountDataDirectChats {
			var d directContent
			if err := jsonUnmarshal(ev.Content.VeryRaw, &d); err == nil {
				a.setDirect(d)
			}
		}
	}
	for roomID, inv := range resp.Rooms.Invite {
		if err := a.onInvite(ctx, roomID, inv); err != nil {
			errs = append(errs, err)
		}
	}
	for roomID, jr := range resp.Rooms.Join {
		if jr == nil {
			continue
		}
		for _, ev := range jr.Timeline.Events {
			if ev == nil {
				continue
			}
			ev.RoomID = roomID
			if ev.Type == event.StateMember {
				a.forgetRoom(roomID)
			}
			if first {
				continue
			}
			if err := a.onEvent(ctx, roomID, ev); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// onInvite accepts or declines an invite under the access policy.
func (a *Adapter) onInvite(ctx context.Context, roomID id.RoomID, inv *mautrix.SyncInvitedRoom) error {
	if inv == nil {
		return nil
	}
	in := Invite{Room: roomID.String()}
	for _, ev := range inv.State.Events {
		if ev == nil || ev.Type != event.StateMember || ev.StateKey == nil || *ev.StateKey != a.bot.String() {
			continue
		}
		var c struct {
			Membership string `json:"membership"`
			IsDirect   bool   `json:"is_direct"`
		}
		if err := jsonUnmarshal(ev.Content.VeryRaw, &c); err != nil || c.Membership != "invite" {
			continue
		}
		in.Inviter, in.Direct = ev.Sender.String(), c.IsDirect
	}
	if in.Inviter == "" {
		return nil
	}
	join := false
	if a.opts.JoinFunc != nil {
		ok, err := a.opts.JoinFunc(ctx, in)
		if err != nil {
			return fmt.Errorf("deciding on the invite to %s from %s: %w", roomID, in.Inviter, err)
		}
		join = ok
	}
	if !join {
		a.log.InfoContext(ctx, "declining a matrix invite the access policy does not allow", "room_id", roomID, "inviter", in.Inviter)
		if _, err := a.cli.LeaveRoom(ctx, roomID); err != nil {
			a.log.WarnContext(ctx, "declining a matrix invite", "room_id", roomID, "err", err)
		}
		return nil
	}
	err := a.retry(ctx, func() error {
		_, err := a.cli.JoinRoomByID(ctx, roomID)
		return err
	})
	if err != nil {
		return fmt.Errorf("joining %s on %s's invite: %w", roomID, in.Inviter, err)
	}
	a.log.InfoContext(ctx, "joined a matrix room", "room_id", roomID, "inviter", in.Inviter, "direct", in.Direct)
	if in.Direct {
		if err := a.recordDirect(ctx, id.UserID(in.Inviter), roomID); err != nil {
			return fmt.Errorf("joining %s on %s's invite: %w", roomID, in.Inviter, err)
		}
	}
	return nil
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
