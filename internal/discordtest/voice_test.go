package discordtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// postMultipart sends payload_json and files as a message create, as
// discordgo does, and returns the status and the error code (0 for none).
func postMultipart(t *testing.T, s *Server, path string, payload any, files map[string][]byte) (int, float64) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	pj, _ := json.Marshal(payload)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="payload_json"`)
	h.Set("Content-Type", "application/json")
	pw, _ := w.CreatePart(h)
	pw.Write(pj)
	for field, data := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+field+`"; filename="voice-message.ogg"`)
		h.Set("Content-Type", "audio/ogg")
		fw, _ := w.CreatePart(h)
		fw.Write(data)
	}
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v9"+path, &body)
	req.Header.Set("Authorization", "Bot "+s.Token)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	code, _ := out["code"].(float64)
	return resp.StatusCode, code
}

func TestVoiceMessages(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.AddChannel(discordgo.Channel{ID: "10", GuildID: DefaultGuildID})
	// The first page of an Ogg Opus file is enough for the fake's check.
	ogg := append([]byte("OggS\x00\x02"), append(make([]byte, 22), []byte("OpusHead\x01\x01")...)...)
	wave := base64.StdEncoding.EncodeToString(make([]byte, 10))
	meta := func(d float64, w string) []map[string]any {
		return []map[string]any{{"id": "0", "filename": "voice-message.ogg", "duration_secs": d, "waveform": w}}
	}
	tests := []struct {
		name    string
		payload map[string]any
		files   map[string][]byte
		code    float64
	}{
		{"documented form", map[string]any{"flags": FlagVoiceMessage, "attachments": meta(1.5, wave)}, map[string][]byte{"files[0]": ogg}, 0},
		{"content too", map[string]any{"flags": FlagVoiceMessage, "content": "hi", "attachments": meta(1.5, wave)}, map[string][]byte{"files[0]": ogg}, 50159},
		{"two files", map[string]any{"flags": FlagVoiceMessage, "attachments": meta(1.5, wave)}, map[string][]byte{"files[0]": ogg, "files[1]": ogg}, 50160},
		{"not ogg opus", map[string]any{"flags": FlagVoiceMessage, "attachments": meta(1.5, wave)}, map[string][]byte{"files[0]": []byte("ID3 an mp3")}, 50160},
		{"no duration", map[string]any{"flags": FlagVoiceMessage, "attachments": []map[string]any{{"id": "0", "waveform": wave}}}, map[string][]byte{"files[0]": ogg}, 50161},
		{"no waveform", map[string]any{"flags": FlagVoiceMessage, "attachments": []map[string]any{{"id": "0", "duration_secs": 1.5}}}, map[string][]byte{"files[0]": ogg}, 50161},
		{"waveform over 256 points", map[string]any{"flags": FlagVoiceMessage, "attachments": meta(1.5, base64.StdEncoding.EncodeToString(make([]byte, 257)))}, map[string][]byte{"files[0]": ogg}, 50161},
		{"no metadata", map[string]any{"flags": FlagVoiceMessage}, map[string][]byte{"files[0]": ogg}, 50161},
	}
	for _, tc := range tests {
		status, code := postMultipart(t, s, "/channels/10/messages", tc.payload, tc.files)
		if code != tc.code || (tc.code == 0) != (status == http.StatusOK) {
			t.Errorf("%s: answered %d code %v, want code %v", tc.name, status, code, tc.code)
		}
	}
	msgs := s.BotMessages("10")
	if len(msgs) != 1 || !msgs[0].VoiceMessage() || msgs[0].Attachments[0].DurationSecs != 1.5 || msgs[0].Attachments[0].Waveform != wave {
		t.Fatalf("stored bot messages %+v; want the one voice message with its duration and waveform", msgs)
	}
	if status, out := do(t, s, http.MethodPatch, "/channels/10/messages/"+msgs[0].ID, map[string]any{"content": "edited"}); status != http.StatusBadRequest || out["code"] != float64(50162) {
		t.Fatalf("editing a voice message answered %d %v; want 400 code 50162", status, out)
	}

	// A person's voice message arrives as Discord sends it.
	in := s.UserVoiceMessage("10", discordgo.User{ID: "7", Username: "alice"}, ogg, 2.25, []byte{1, 2, 3})
	_, got := do(t, s, http.MethodGet, "/channels/10/messages/"+in.ID, nil)
	att := got["attachments"].([]any)[0].(map[string]any)
	if got["flags"] != float64(FlagVoiceMessage) || got["content"] != "" || att["content_type"] != "audio/ogg" ||
		att["duration_secs"] != 2.25 || att["waveform"] != base64.StdEncoding.EncodeToString([]byte{1, 2, 3}) {
		t.Fatalf("a person's voice message reads %v; want flags 8192, no content, an audio/ogg attachment with duration_secs and waveform", got)
	}
}
