package discordtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// Voice messages, as Discord documents them
// (https://discord.com/developers/docs/resources/message#voice-messages):
// a message with the IS_VOICE_MESSAGE flag (1 << 13) has a single audio
// attachment and nothing else (no content, embeds, components or
// stickers); the attachment carries duration_secs (a float) and waveform
// (base64 of one byte per point, at most 256 points, one per 100 ms at
// most); it cannot be edited. Clients upload "a 1 channel, 48000 Hz,
// 32kbps Opus stream in an OGG container": the fake holds a bot's voice
// message to an Ogg file with an Opus stream, and answers the documented
// error codes (50159-50162) otherwise.

// FlagVoiceMessage is IS_VOICE_MESSAGE.
const FlagVoiceMessage = int(discordgo.MessageFlagsIsVoiceMessage)

// MaxWaveformPoints is the longest waveform a voice message has.
const MaxWaveformPoints = 256

// VoiceMessage reports whether the message was sent as a voice message.
func (m *Message) VoiceMessage() bool { return m.Flags&FlagVoiceMessage != 0 }

// UserVoiceMessage stores a voice message author recorded in a channel
// (an Ogg Opus file lasting durationSecs, with its waveform) and sends
// MESSAGE_CREATE, as a Discord client's voice message arrives: flags
// 8192, no content, one attachment voice-message.ogg of type audio/ogg.
func (s *Server) UserVoiceMessage(channelID string, author discordgo.User, ogg []byte, durationSecs float64, waveform []byte) *Message {
	return s.userMessage(channelID, author, "", FlagVoiceMessage, Attachment{
		Filename: "voice-message.ogg", ContentType: "audio/ogg", Data: ogg,
		DurationSecs: durationSecs, Waveform: base64.StdEncoding.EncodeToString(waveform),
	})
}

// attachmentMeta is an entry of a create request's attachments array: the
// metadata of the uploaded file files[ID].
type attachmentMeta struct {
	ID           json.RawMessage `json:"id"`
	Filename     string          `json:"filename"`
	DurationSecs *float64        `json:"duration_secs"`
	Waveform     *string         `json:"waveform"`
}

// voiceMessage checks a create request with IS_VOICE_MESSAGE and fills
// the file's duration and waveform from the attachments array; it returns
// Discord's error for a request Discord refuses.
func voiceMessage(p *messagePayload, files []Attachment) (int, any) {
	if (p.Content != nil && *p.Content != "") || (present(p.Embeds) && string(p.Embeds) != "[]") ||
		(present(p.Components) && string(p.Components) != "[]") || p.hasStickers() {
		return http.StatusBadRequest, errBody(50159, "Voice messages do not support additional content.")
	}
	if len(files) != 1 || !audioFile(files[0]) {
		return http.StatusBadRequest, errBody(50160, "Voice messages must have a single audio attachment.")
	}
	var metas []attachmentMeta
	if present(p.Attachments) {
		if err := json.Unmarshal(p.Attachments, &metas); err != nil {
			return http.StatusBadRequest, errBody(50035, "Invalid Form Body: attachments: "+err.Error())
		}
	}
	var meta *attachmentMeta
	for i := range metas {
		if id := strings.Trim(string(metas[i].ID), `"`); id == strings.TrimSuffix(strings.TrimPrefix(files[0].Field, "files["), "]") {
			meta = &metas[i]
		}
	}
	if meta == nil || meta.DurationSecs == nil || *meta.DurationSecs <= 0 || meta.Waveform == nil {
		return http.StatusBadRequest, errBody(50161, "Voice messages must have supporting metadata.")
	}
	points, err := base64.StdEncoding.DecodeString(*meta.Waveform)
	if err != nil || len(points) == 0 || len(points) > MaxWaveformPoints {
		return http.StatusBadRequest, errBody(50161, "Voice messages must have supporting metadata.")
	}
	if !oggOpus(files[0].Data) {
		// Discord documents the encoding as what its clients send; a file
		// that is not Ogg Opus does not play as a voice message.
		return http.StatusBadRequest, errBody(50160, "Voice messages must have a single audio attachment.")
	}
	files[0].DurationSecs, files[0].Waveform = *meta.DurationSecs, *meta.Waveform
	if files[0].ContentType == "" {
		files[0].ContentType = "audio/ogg"
	}
	return 0, nil
}

// audioFile: the upload is audio, by its part's type or its name.
func audioFile(a Attachment) bool {
	return strings.HasPrefix(a.ContentType, "audio/") || strings.HasSuffix(strings.ToLower(a.Filename), ".ogg")
}

// oggOpus: data is an Ogg stream whose first packet is an Opus header.
func oggOpus(data []byte) bool {
	return bytes.HasPrefix(data, []byte("OggS")) && bytes.Contains(data[:min(len(data), 512)], []byte("OpusHead"))
}
