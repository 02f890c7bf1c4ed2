package slack

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// accepter is a Submitter that takes an event with one durable write and
// finishes it after the ack (core.Service.Accept).
type accepter interface {
	Accept(ctx context.Context, in *core.Inbound) (*core.SubmitResult, error)
	SetInboundFinisher(platform string, f core.InboundFinisher)
}

// deferred is what the ack leaves for after it: the shared files to read,
// and the team whose token reads them.
type deferred struct {
	Team  string       `json:"team"`
	Files []sharedFile `json:"files,omitempty"`
	// Shortcut is a message shortcut's message, whose thread is read into
	// the question (shortcuts.go).
	Shortcut *shortcutContext `json:"shortcut,omitempty"`
}

// finisher is the adapter's core.InboundFinisher.
type finisher struct{ a *Adapter }

var _ core.InboundFinisher = finisher{}

// Prepare reads the event's shared files, within the adapter's limits. A
// file that cannot be read is noted as such on the message, as before the
// ack moved ahead of the download: the message itself is never dropped.
func (f finisher) Prepare(ctx context.Context, in *core.Inbound) error {
	var d deferred
	if err := json.Unmarshal(in.Deferred, &d); err != nil {
		return fmt.Errorf("decoding the deferred part of slack event %s: %w", in.EventID, err)
	}
	if d.Shortcut != nil {
		if w, err := f.a.workspaceFor(ctx, d.Team); err == nil {
			in.Text = f.a.shortcutQuestion(ctx, w, d.Shortcut)
		}
	}
	if len(d.Files) == 0 {
		return nil
	}
	w, err := f.a.workspaceFor(ctx, d.Team)
	if err != nil {
		f.a.log.WarnContext(ctx, "reading the files of a slack event", "event_id", in.EventID, "team_id", d.Team, "err", err)
		for _, sf := range d.Files {
			in.Files = append(in.Files, core.UserFile{Name: firstOf(sf.Name, sf.Title, sf.ID, "file"), MimeType: sf.MimeType, Size: sf.Size, Note: "it could not be downloaded"})
		}
		return nil
	}
	in.Files = f.a.readFiles(ctx, w, d.Files)
	// Heard here, in the event's work item: a process killed while it
	// transcribes leaves the item to run again, and nothing is stored
	// until Submit commits the message, once.
	return f.a.hear(ctx, in)
}

// Submitted does what the ack used to do once core had the message: the
// refusal's notice, the ack reaction.
func (f finisher) Submitted(ctx context.Context, in *core.Inbound, res *core.SubmitResult) {
	f.a.afterSubmit(ctx, in, res, nil)
}

// afterSubmit tells a refused sender why, and reacts to a message taken.
// w is the event's workspace, or nil to find it by in.Workspace.
func (a *Adapter) afterSubmit(ctx context.Context, in *core.Inbound, res *core.SubmitResult, w *workspace) {
	if res == nil {
		return
	}
	if res.Refused && res.Notice != "" {
		a.background(func(ctx context.Context) { a.tellRefused(ctx, in, res.Notice) })
	}
	if !res.Duplicate && !res.Ignored && !res.Refused && a.opts.AckReaction != "" && in.MessageID != "" {
		if w == nil {
			var d deferred
			if len(in.Deferred) > 0 {
				_ = json.Unmarshal(in.Deferred, &d)
			}
			var err error
			if w, err = a.workspaceFor(ctx, firstOf(d.Team, in.Workspace)); err != nil {
				a.log.WarnContext(ctx, "reacting to a slack message", "event_id", in.EventID, "err", err)
				return
			}
		}
		a.background(func(ctx context.Context) { a.ackReaction(ctx, w, in.Channel, in.MessageID) })
	}
}
