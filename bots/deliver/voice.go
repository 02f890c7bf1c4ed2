package deliver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/voice"
)

// Voice notes. An agent's reply to a message that was spoken (a Slack
// audio clip, a Discord voice message) shows what was heard above it, as
// a quoted first line:
//
//	> 🎙️ “remind me to water the plants at five”
//
//	Done: I'll remind you at 17:00.
//
// so the person sees at once whether they were understood, where they
// read the answer (a chat app's own transcription shows under the clip,
// out of the way). Only the first reply after the note quotes it; a
// turn's later messages (after a tool call) do not. The live stream
// starts with the same line, so the final reply is what was streamed,
// continued. When the agent answers with its voice too
// (voice.reply_with_voice), every reply to the note carries its text
// spoken (bots.Message.Voice), which the platform posts after the text.
// Both are read from the log alone, so a retried delivery posts the same.

// SpeakReplyFunc speaks an agent's reply to a voice note: the audio to
// post with it, or nil when the agent does not answer with its voice. An
// error leaves the voice out (the text is the answer); it is logged.
type SpeakReplyFunc func(ctx context.Context, conv uuid.UUID, agent, text string) (*voice.Audio, error)

// heardWindow is how many entries before a reply are read for the voice
// note it answers.
const heardWindow = 24

// maxQuote is the most characters of a transcript quoted above a reply:
// a long note is shown by its start (the log keeps it whole).
const maxQuote = 400

// heardQuote is the line that shows a transcript above a reply: one line,
// however the speech was broken, cut at maxQuote characters.
func heardQuote(transcript string) string {
	t := strings.Join(strings.Fields(transcript), " ")
	if r := []rune(t); len(r) > maxQuote {
		t = strings.TrimSpace(string(r[:maxQuote-1])) + "…"
	}
	return "> 🎙️ “" + t + "”\n\n"
}

// answered is what a reply at seq answers: the transcript of the voice
// note it follows (spoken), and whether it is the first reply since
// (quote: the transcript goes above it).
type answered struct {
	transcript string
	spoken     bool
	quote      bool
}

// answerOf reads the log back from before seq to the last message of a
// person's: a spoken one is a voice note.
func (d *Deliverer) answerOf(ctx context.Context, conv uuid.UUID, seq int64) (answered, error) {
	if seq < 2 {
		return answered{}, nil
	}
	es, err := d.st.EntryList(ctx, &core.EntryListParams{ConversationID: conv, AfterSeq: max(0, seq-1-heardWindow), UpToSeq: seq - 1})
	if err != nil {
		return answered{}, fmt.Errorf("reading %s for the voice note a reply answers: %w", conv, err)
	}
	quote := true
	for _, e := range slices.Backward(es) {
		switch e.Kind {
		case core.EntryAssistant:
			if c, err := core.Decode[core.AssistantContent](e); err == nil && c.Text != "" {
				quote = false
			}
		case core.EntryUser:
			c, err := core.Decode[core.UserContent](e)
			if err != nil {
				return answered{}, nil
			}
			t, ok := spokenText(&c)
			if !ok {
				return answered{}, nil
			}
			return answered{transcript: t, spoken: true, quote: quote}, nil
		}
	}
	return answered{}, nil
}

// speakReply is the reply's text spoken by agent, or nil (no
// SpeakReplyFunc, an agent that answers in text alone, a failure).
func (d *Deliverer) speakReply(ctx context.Context, conv uuid.UUID, agent, text string) *voice.Audio {
	if d.opts.SpeakReplyFunc == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	a, err := d.opts.SpeakReplyFunc(ctx, conv, agent, text)
	if err != nil {
		d.log.WarnContext(ctx, "speaking a reply to a voice note; posting its text alone", "agent", agent, "error", redact.String(err.Error()))
		return nil
	}
	return a
}

// withVoiceNote adds to an agent's reply what its voice note asks for: the
// transcript above it, the reply spoken. A reply posted before is left as
// it is (it will not be posted again).
func (d *Deliverer) withVoiceNote(ctx context.Context, b *bound, e *core.Entry, agent, text string, msg *bots.Message) error {
	if e.Seq == nil {
		return nil
	}
	ans, err := d.answerOf(ctx, b.b.ConversationID, *e.Seq)
	if err != nil || !ans.spoken {
		return err
	}
	if ans.quote {
		msg.Text = heardQuote(ans.transcript) + msg.Text
	}
	if p, err := d.st.PostedGet(ctx, &core.PostedGetParams{BindingID: b.b.ID, EntryID: e.ID}); err == nil && !p.Pending {
		return nil
	}
	msg.Voice = d.speakReply(ctx, b.b.ConversationID, agent, text)
	return nil
}

// streamPrefix is what a turn's live reply on b starts with: the quote of
// the voice note the turn answers, when its reply will carry it.
func (t *turnDelivery) streamPrefix(ctx context.Context, b *bound) string {
	if t.trigger < 1 {
		return ""
	}
	conv, err := t.d.st.ConversationGet(ctx, b.b.ConversationID)
	if err != nil {
		t.d.log.WarnContext(ctx, "reading the conversation for a voice note", "error", err)
		return ""
	}
	ans, err := t.d.answerOf(ctx, conv.ID, conv.LastSeq+1)
	if err != nil {
		t.d.log.WarnContext(ctx, "reading the voice note a reply answers", "error", err)
		return ""
	}
	if !ans.spoken || !ans.quote {
		return ""
	}
	return heardQuote(ans.transcript)
}

// spokenText is the transcript of a spoken message, and whether it was
// spoken.
func spokenText(c *core.UserContent) (string, bool) {
	if c.Spoken == nil || c.Spoken.Live {
		// Live speech (the console, a voice channel) is answered where it
		// was heard, not quoted.
		return "", false
	}
	return c.Text, true
}
