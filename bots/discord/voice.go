package discord

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/voicenote"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/voice"
)

// Voice notes. A voice message (the IS_VOICE_MESSAGE flag, one Ogg Opus
// attachment with duration_secs and waveform), or an audio file sent to
// the bot, is heard (Options.HearFunc) and answered like typed text. The
// event is stored first (core.Service.Accept, one durable write on the
// gateway's goroutine); the recording is downloaded and transcribed in
// the event's work item, which runs again after a crash, so a process
// killed mid-transcription loses nothing, and Submit's dedupe on the
// message id stores the message once.

// accepter is a Submitter that takes an event with one durable write and
// finishes it after (core.Service.Accept).
type accepter interface {
	Accept(ctx context.Context, in *core.Inbound) (*core.SubmitResult, error)
	SetInboundFinisher(platform string, f core.InboundFinisher)
}

// voiceDeferred is what is left for the event's work item: the recording to
// hear.
type voiceDeferred struct {
	Voice *voiceNote `json:"voice,omitempty"`
}

// voiceNote is the attachment a message was spoken in.
type voiceNote struct {
	ID          string  `json:"id"`
	URL         string  `json:"url"`
	Filename    string  `json:"filename"`
	ContentType string  `json:"content_type"`
	Size        int     `json:"size"`
	Seconds     float64 `json:"duration_secs,omitempty"`
}

// voiceNote finds the recording m was spoken in, and the attachments
// besides it: a voice message's one attachment, or the first audio file.
// ok is false for a message that is not a voice note, or when the adapter
// hears none (no HearFunc).
func (a *Adapter) voiceNote(m *discordgo.Message) (*voiceNote, []*discordgo.MessageAttachment, bool) {
	if a.opts.HearFunc == nil {
		return nil, m.Attachments, false
	}
	isVoice := m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0
	for i, at := range m.Attachments {
		if at == nil {
			continue
		}
		mt := voicenote.AudioType(at.ContentType, at.Filename, isVoice)
		if mt == "" {
			continue
		}
		rest := slices.Delete(slices.Clone(m.Attachments), i, i+1)
		return &voiceNote{ID: at.ID, URL: at.URL, Filename: at.Filename, ContentType: mt, Size: at.Size, Seconds: at.DurationSecs}, rest, true
	}
	return nil, m.Attachments, false
}

// finisher is the adapter's core.InboundFinisher, for voice notes.
type finisher struct{ a *Adapter }

var _ core.InboundFinisher = finisher{}

// Prepare downloads the voice note and hears it.
func (f finisher) Prepare(ctx context.Context, in *core.Inbound) error {
	var d voiceDeferred
	if err := json.Unmarshal(in.Deferred, &d); err != nil {
		return fmt.Errorf("decoding the deferred part of discord message %s: %w", in.MessageID, err)
	}
	if d.Voice == nil {
		return nil
	}
	return f.a.hear(ctx, in, d.Voice)
}

// Submitted reacts to the message taken, or tells a refused sender why.
func (f finisher) Submitted(ctx context.Context, in *core.Inbound, res *core.SubmitResult) {
	if res != nil {
		f.a.afterSubmit(ctx, in, res)
	}
}

// hear downloads the recording and hands it to HearFunc. A recording that
// cannot be read (over the size limit, gone from the CDN) goes along as a
// file with the reason, as other attachments do; a failed download that
// may pass is returned, to be retried with the work item.
func (a *Adapter) hear(ctx context.Context, in *core.Inbound, note *voiceNote) error {
	uf := core.UserFile{Name: note.Filename, MimeType: note.ContentType, Size: int64(note.Size)}
	if int64(note.Size) > a.opts.FileMaxBytes || a.opts.FileMaxCount < 0 {
		uf.Note = fmt.Sprintf("a voice note of %d bytes, over the %d-byte limit", note.Size, a.opts.FileMaxBytes)
		if a.opts.FileMaxCount < 0 {
			uf.Note = "the bot does not read files"
		}
		in.Files = append(in.Files, uf)
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, a.opts.FileTimeout)
	data, err := a.download(dctx, note.URL)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.log.WarnContext(ctx, "downloading a discord voice note", "attachment_id", note.ID, "err", err)
		uf.Note = "it could not be downloaded"
		in.Files = append(in.Files, uf)
		return nil
	}
	if err := a.opts.HearFunc(ctx, in, voice.Recording{Name: note.Filename, MimeType: note.ContentType, Data: data}); err != nil {
		return fmt.Errorf("hearing the voice note of discord message %s: %w", in.MessageID, err)
	}
	return nil
}

// hearNow hears a voice note before Submit, on a Submitter that cannot
// take events ahead of their work (no Accept): the gateway's goroutine
// waits for it.
func (a *Adapter) hearNow(ctx context.Context, in *core.Inbound) {
	var d voiceDeferred
	_ = json.Unmarshal(in.Deferred, &d)
	in.Deferred = nil
	if d.Voice == nil {
		return
	}
	if err := a.hear(ctx, in, d.Voice); err != nil {
		a.log.WarnContext(ctx, "hearing a discord voice note", "message_id", in.MessageID, "err", err)
		in.Files = append(in.Files, core.UserFile{Name: d.Voice.Filename, MimeType: d.Voice.ContentType, Size: int64(d.Voice.Size), Note: "it could not be transcribed"})
	}
}

// voicePart is the nonce index of a reply's voice message: apart from its
// text's parts (a reply has far fewer than 99).
const voicePart = 99

// voiceMeta is the attachments entry of a voice message: its one file's
// length and waveform.
type voiceMeta struct {
	ID           string  `json:"id"`
	Filename     string  `json:"filename"`
	DurationSecs float64 `json:"duration_secs"`
	Waveform     string  `json:"waveform"`
}

// postVoice posts a reply's spoken audio (Message.Voice) as a voice
// message after its text, as the bot (webhooks post text under the
// agent's name; a voice message goes as the bot, which may send them):
// Ogg Opus, its length and waveform, the IS_VOICE_MESSAGE flag and
// nothing else, as Discord requires. Its nonce (from the post's key)
// makes a retried post return the message the first one made. It never fails the post: the
// text is the answer, so an encoding or post that fails is logged and the
// voice left out.
func (a *Adapter) postVoice(ctx context.Context, channelID string, m *bots.Message) {
	if m.Voice == nil {
		return
	}
	data, err := a.opts.Encoder.Encode(ctx, *m.Voice, voicenote.OggOpus)
	if err != nil {
		a.log.WarnContext(ctx, "encoding a spoken reply for discord; posting the text alone", "channel_id", channelID, "err", err)
		return
	}
	name := "voice-message" + voicenote.OggOpus.Ext()
	secs := m.Voice.Format.Duration(len(m.Voice.PCM)).Seconds()
	p := outgoing{
		files: []bots.File{{Name: name, MimeType: voicenote.OggOpus.MimeType(), Data: data}},
		flags: discordgo.MessageFlagsIsVoiceMessage,
		attachments: []voiceMeta{{ID: "0", Filename: name, DurationSecs: math.Round(secs*100) / 100,
			Waveform: base64.StdEncoding.EncodeToString(voicenote.Waveform(*m.Voice))}},
		nonce: nonceFor(m.Key, voicePart),
	}
	if _, err := a.sendMessage(ctx, channelID, p); err != nil {
		a.log.WarnContext(ctx, "posting a spoken reply to discord; the text went alone", "channel_id", channelID, "err", refusal(err))
	}
}
