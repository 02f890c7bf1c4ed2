package slack

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// runSocketMode keeps a Socket Mode connection up until ctx ends and handles
// its envelopes one at a time, which keeps a thread's messages in order.
// slack-go reconnects on a disconnect request or a dead connection; when it
// gives up (bad token, for instance) this loop starts it again after a pause.
func (a *Adapter) runSocketMode(ctx context.Context) {
	client := socketmode.New(a.socketAPI(), socketmode.OptionLog(slogOutput{a.log}))
	a.wg.Go(func() {
		pause := time.Second
		for {
			err := client.RunContext(ctx)
			if ctx.Err() != nil {
				return
			}
			a.log.ErrorContext(ctx, "slack socket mode stopped; reconnecting", "err", err, "pause", pause)
			if a.opts.SleepFunc(ctx, pause) != nil {
				return
			}
			pause = min(2*pause, time.Minute)
		}
	})
	for {
		select {
		case <-ctx.Done():
			return
		case evt := <-client.Events:
			a.handleSocketEvent(ctx, client, evt)
		}
	}
}

func (a *Adapter) handleSocketEvent(ctx context.Context, client *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI:
		a.handleEnvelope(ctx, client, evt.Request)
	case socketmode.EventTypeInteractive:
		ic, ok := evt.Data.(slack.InteractionCallback)
		if !ok || evt.Request == nil {
			return
		}
		if resp, ok := a.formSubmission(ctx, &ic); ok {
			a.ackFormAnswer(ctx, client, evt.Request.EnvelopeID, resp)
			return
		}
		if err := a.handleInteraction(ctx, &ic); err != nil {
			a.log.ErrorContext(ctx, "slack click not handled; not acked", "envelope_id", evt.Request.EnvelopeID, "err", err)
			return
		}
		a.ack(ctx, client, evt.Request.EnvelopeID)
	case socketmode.EventTypeSlashCommand:
		a.handleSlashSocket(ctx, client, evt)
	case socketmode.EventTypeErrorBadMessage:
		// slack-go could not parse the inner event (a type it does not know).
		// The adapter reads events itself, so it still handles and acks it
		// rather than have Slack redeliver it forever.
		bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
		if !ok {
			return
		}
		var req socketmode.Request
		if json.Unmarshal(bad.Message, &req) == nil && req.Type == socketmode.RequestTypeEventsAPI {
			a.handleEnvelope(ctx, client, &req)
			return
		}
		a.log.WarnContext(ctx, "slack socket mode message not understood", "err", bad.Cause)
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth, socketmode.EventTypeIncomingError,
		socketmode.EventTypeErrorWriteFailed:
		a.log.WarnContext(ctx, "slack socket mode", "event", evt.Type, "data", evt.Data)
	case socketmode.EventTypeConnected:
		a.log.InfoContext(ctx, "slack socket mode connected")
	default:
		a.log.DebugContext(ctx, "slack socket mode", "event", evt.Type)
	}
}

// handleEnvelope hands an events_api envelope to core and acks it once core
// has it; without the ack Slack delivers it again.
func (a *Adapter) handleEnvelope(ctx context.Context, client *socketmode.Client, req *socketmode.Request) {
	if req == nil {
		return
	}
	var cb callback
	if err := json.Unmarshal(req.Payload, &cb); err != nil {
		a.log.WarnContext(ctx, "slack envelope payload does not decode; acking to drop it", "envelope_id", req.EnvelopeID, "err", err)
		a.ack(ctx, client, req.EnvelopeID)
		return
	}
	if req.RetryAttempt > 0 {
		a.log.InfoContext(ctx, "slack event retry", "event_id", cb.EventID, "retry_num", req.RetryAttempt, "retry_reason", req.RetryReason)
	}
	if err := a.handleCallback(ctx, &cb); err != nil {
		a.log.ErrorContext(ctx, "slack event not stored; not acked so slack retries", "event_id", cb.EventID, "err", err)
		return
	}
	a.ack(ctx, client, req.EnvelopeID)
}

func (a *Adapter) ack(ctx context.Context, client *socketmode.Client, envelopeID string) {
	if envelopeID == "" {
		return
	}
	if err := client.AckCtx(ctx, envelopeID, nil); err != nil && !errors.Is(err, context.Canceled) {
		a.log.WarnContext(ctx, "acking slack envelope", "envelope_id", envelopeID, "err", err)
	}
}
