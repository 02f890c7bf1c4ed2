package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/store"
)

// Voice notes from the chat platforms (bots/voicenote.HearFunc, written
// for the voice-notes part apart from spoken.go): a Slack audio clip or a
// Discord voice message is heard by the transcriber of the agent the
// message goes to, in the event's work item (an InboundFinisher's
// Prepare), and the message becomes the spoken one (Heard.Apply) that
// Submit then stores once. SpeakFor speaks an agent's reply to one, for
// the platform to post as a voice message.

// HearVoiceNote makes in, a message that came with the recording rec, the
// spoken message its agent hears: the one addressed, else the channel's,
// else the default, as Submit chooses. Text the person typed with the
// note stays before the transcript. A note that cannot be heard for good
// (the agent's voice.transcribe is off, it is over a limit, no words were
// heard, the transcriber refused it) goes along as a file with the reason,
// so the agent can answer it; only a cancelled ctx is an error, to be
// retried with the work item.
func (s *Service) HearVoiceNote(ctx context.Context, in *Inbound, rec voice.Recording) error {
	ag := s.agents().Default()
	if a, ok := s.agents().ForChannel(in.Channel); ok {
		ag = a
	}
	if in.Agent != "" {
		if a, ok := s.agents().Find(in.Agent); ok {
			ag = a
		}
	}
	typed := strings.TrimSpace(in.Text)
	h, err := s.TranscribeFor(ctx, ag.Name, in.Platform+":"+in.UserID, rec)
	if err == nil {
		h.Apply(in)
		if typed != "" {
			in.Text = typed + "\n\n" + in.Text
		}
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The model cannot read the audio: only its name and the reason go.
	kept := recordingFile(rec)
	kept.Data = nil
	var limited *VoiceLimited
	switch {
	case errors.Is(err, ErrNothingHeard):
		kept.Note = "a voice note in which no words were heard"
	case errors.As(err, &limited):
		kept.Note = "a voice note that was not transcribed: " + limited.Reason
	case errors.Is(err, ErrVoiceOff):
		kept.Note = fmt.Sprintf("a voice note; %s does not transcribe them (voice.transcribe is off)", ag.Name)
	default:
		s.log.WarnContext(ctx, "hearing a voice note", "agent", ag.Name, "platform", in.Platform, "message_id", in.MessageID, "error", err)
		kept.Note = "a voice note that could not be transcribed"
	}
	in.Files = append(in.Files, kept)
	return nil
}

// SpeakFor speaks text (Markdown, as an agent writes it) with the agent's
// speaker and records the speech's usage in conv. It returns nil when the
// agent does not answer voice notes with its voice (voice.reply_with_voice
// off, or voice.speak off).
func (s *Service) SpeakFor(ctx context.Context, agent string, conv uuid.UUID, text string) (*voice.Audio, error) {
	a, ok := s.agents().Find(agent)
	if !ok || !a.Voice.ReplyWithVoice || !a.Voice.Speaks() {
		return nil, nil
	}
	eng, _, err := s.VoiceFor(agent)
	if err != nil {
		return nil, err
	}
	if eng.Speaker == nil {
		return nil, nil
	}
	said := speakable(text)
	if said == "" {
		return nil, nil
	}
	au, err := eng.Speaker.Speak(ctx, said)
	if err != nil {
		return nil, fmt.Errorf("speaking agent %q's reply: %w", agent, err)
	}
	s.recordVoiceUsage(ctx, agent, conv, store.UsageSpeech, eng.Speaks, "espeak-ng", au.Format.Duration(len(au.PCM)), au.Characters)
	return &au, nil
}

// speakable is Markdown as it is said: sentence by sentence, without
// links' addresses, emphasis, code or list marks.
func speakable(md string) string {
	var sp voice.Sentences
	parts := sp.Feed(md)
	if rest := sp.Flush(); rest != "" {
		parts = append(parts, rest)
	}
	return strings.Join(parts, " ")
}
