package slacktest

import (
	"path"
	"strings"
)

// ShareAudioClip keeps an audio clip as if a person had recorded it in
// Slack (the microphone button) and returns the file object its message
// event carries: ShareFile's fields plus subtype slack_audio,
// media_display_type audio, filetype (webm or mp4) and duration_ms, as
// Slack sends a clip. mimeType is what Slack says, which for a clip is
// audio/webm or audio/mp4, and sometimes video/mp4 or nothing.
func (s *Server) ShareAudioClip(name, mimeType string, data []byte, durationMS int) map[string]any {
	f := s.ShareFile(name, mimeType, data)
	f["subtype"] = "slack_audio"
	f["media_display_type"] = "audio"
	f["filetype"] = strings.TrimPrefix(path.Ext(name), ".")
	f["duration_ms"] = durationMS
	f["pretty_type"] = "Audio clip"
	return f
}
