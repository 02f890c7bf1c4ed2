package slack

import (
	"context"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/voicenote"
)

// postVoice uploads a reply's spoken audio (Message.Voice) into the
// thread, after its text, as an audio file: Opus in WebM, the format of
// Slack's own audio clips, which Slack plays in place. Apps cannot post
// clips of their own; an uploaded audio file is the nearest. It never
// fails the post: the text is the answer, so an encoding or upload that
// fails is logged and the voice left out.
func (a *Adapter) postVoice(ctx context.Context, w *workspace, channel, thread string, m *bots.Message) {
	if m.Voice == nil {
		return
	}
	data, err := a.opts.Encoder.Encode(ctx, *m.Voice, voicenote.WebMOpus)
	if err != nil {
		a.log.WarnContext(ctx, "encoding a spoken reply for slack; posting the text alone", "channel", channel, "err", err)
		return
	}
	f := bots.File{Name: "spoken-reply" + voicenote.WebMOpus.Ext(), MimeType: voicenote.WebMOpus.MimeType(), Data: data, Title: "🔊 Spoken reply"}
	if err := a.uploadFiles(ctx, w, channel, thread, []bots.File{f}); err != nil {
		a.log.WarnContext(ctx, "uploading a spoken reply to slack; the text went alone", "channel", channel, "err", err)
	}
}
