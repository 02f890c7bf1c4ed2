package app

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/voice"
)

// speakReply is delivery's SpeakReplyFunc: an agent with
// voice.reply_with_voice speaks its replies to voice notes (core.SpeakFor).
// An agent whose voice is off answers in text alone.
func (a *App) speakReply(ctx context.Context, conv uuid.UUID, agent, text string) (*voice.Audio, error) {
	au, err := a.Service.SpeakFor(ctx, agent, conv, text)
	if errors.Is(err, core.ErrVoiceOff) {
		return nil, nil
	}
	return au, err
}
