package discord

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"
)

// maxNonceLen is Discord's limit on a message nonce (a string of at most 25
// characters, or an integer).
const maxNonceLen = 25

// nonceFor is the nonce of part i of the post with idempotency key key: the
// key's UUID in 22 base64url characters and the part's index, within
// Discord's 25 characters. A key that is not a UUID is hashed into one. An
// empty key gets no nonce.
func nonceFor(key string, part int) string {
	if key == "" {
		return ""
	}
	id, err := uuid.Parse(key)
	if err != nil {
		id = uuid.NewSHA1(uuid.NameSpaceOID, []byte(key))
	}
	n := base64.RawURLEncoding.EncodeToString(id[:]) + strconv.Itoa(part)
	if len(n) > maxNonceLen {
		n = n[:maxNonceLen]
	}
	return n
}

// messageSendWithNonce adds the idempotency fields that discordgo v0.29's
// MessageSend lacks. With enforce_nonce, Discord answers a second send with
// the same nonce (from the same author, within a few minutes) with the
// message the first one created, and creates nothing.
type messageSendWithNonce struct {
	*discordgo.MessageSend
	Nonce        string `json:"nonce,omitempty"`
	EnforceNonce bool   `json:"enforce_nonce,omitempty"`
	// Attachments is the files' metadata (a voice message's), which
	// MessageSend lacks too.
	Attachments []voiceMeta `json:"attachments,omitempty"`
}

// sendWithNonce is ChannelMessageSendComplex with a nonce and enforce_nonce,
// written out because discordgo has no field for them; it sends what that
// function sends (JSON, or multipart with the JSON as payload_json when
// there are files) to the same endpoint and rate-limit bucket.
func (a *Adapter) sendWithNonce(channelID string, data *discordgo.MessageSend, nonce string, atts []voiceMeta, opts ...discordgo.RequestOption) (*discordgo.Message, error) {
	for _, e := range data.Embeds {
		if e.Type == "" {
			e.Type = discordgo.EmbedTypeRich
		}
	}
	body := messageSendWithNonce{MessageSend: data, Nonce: nonce, EnforceNonce: nonce != "", Attachments: atts}
	endpoint := discordgo.EndpointChannelMessages(channelID)
	var (
		resp []byte
		err  error
	)
	if len(data.Files) > 0 {
		contentType, multipart, encErr := discordgo.MultipartBodyWithJSON(body, data.Files)
		if encErr != nil {
			return nil, fmt.Errorf("encoding message with files: %w", encErr)
		}
		resp, err = a.s.RequestRaw("POST", endpoint, contentType, multipart, endpoint, 0, opts...)
	} else {
		resp, err = a.s.RequestWithBucketID("POST", endpoint, body, endpoint, opts...)
	}
	if err != nil {
		return nil, err
	}
	var msg discordgo.Message
	if err := json.Unmarshal(resp, &msg); err != nil {
		return nil, fmt.Errorf("decoding sent message: %w", err)
	}
	return &msg, nil
}
