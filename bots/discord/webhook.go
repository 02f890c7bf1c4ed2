package discord

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/bwmarrin/discordgo"
)

// executeWebhook is discordgo's WebhookThreadExecute (wait=true) with the
// with_components=true query parameter, which discordgo cannot send:
// without it Discord ignores a webhook message's components ("If you are
// sending components as part of a webhook you'll need to use the
// ?with_components=true query param otherwise they'll be ignored",
// https://docs.discord.com/developers/components/using-message-components),
// and a card sent through an agent's webhook would lose its buttons, or
// (Components V2) be refused as empty. Same endpoint and rate-limit bucket
// as discordgo's.
func (a *Adapter) executeWebhook(h *webhook, threadID string, data *discordgo.WebhookParams, opts ...discordgo.RequestOption) (*discordgo.Message, error) {
	uri := discordgo.EndpointWebhookToken(h.id, h.token)
	bucket := uri
	q := url.Values{"wait": {"true"}, "with_components": {"true"}}
	if threadID != "" {
		q.Set("thread_id", threadID)
	}
	uri += "?" + q.Encode()
	var (
		resp []byte
		err  error
	)
	if len(data.Files) > 0 {
		contentType, body, encErr := discordgo.MultipartBodyWithJSON(data, data.Files)
		if encErr != nil {
			return nil, fmt.Errorf("encoding webhook message with files: %w", encErr)
		}
		resp, err = a.s.RequestRaw("POST", uri, contentType, body, bucket, 0, opts...)
	} else {
		resp, err = a.s.RequestWithBucketID("POST", uri, data, bucket, opts...)
	}
	if err != nil {
		return nil, err
	}
	var msg discordgo.Message
	if err := json.Unmarshal(resp, &msg); err != nil {
		return nil, fmt.Errorf("decoding webhook message: %w", err)
	}
	return &msg, nil
}
