package slack

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// TestSharedFilesWithinLimits: of the files shared with a message, those
// the model can read and that fit the limits are downloaded with the bot
// token and handed to core with their bytes; the others go by name with
// the reason (too large, a type the model cannot read, past the count).
func TestSharedFilesWithinLimits(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.FileMaxBytes, o.FileMaxCount = 100, 3 })
	small := env.srv.ShareFile("notes.txt", "text/plain", []byte("remember the milk"))
	big := env.srv.ShareFile("photo.jpg", "image/jpeg", bytes.Repeat([]byte{0xff}, 101))
	zip := env.srv.ShareFile("a.zip", "application/zip", []byte("PK"))
	extra := env.srv.ShareFile("more.txt", "text/plain", []byte("more"))
	ev := map[string]any{"type": "message", "subtype": "file_share", "channel_type": "im", "user": "U1", "channel": "D1",
		"text": "", "ts": "1700000010.000001", "files": []map[string]any{small, big, zip, extra}}
	body := slacktest.MustJSON(slacktest.EventCallback("T0FAKE", "EvF1", ev))
	if code, _ := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), nil); code != 200 {
		t.Fatalf("file_share answered %d", code)
	}
	in := env.core.waitInbound(t, 1)[0]
	if len(in.Files) != 4 {
		t.Fatalf("files %+v, want all four listed", in.Files)
	}
	if f := in.Files[0]; string(f.Data) != "remember the milk" || f.Note != "" {
		t.Errorf("notes.txt = %+v, want its bytes", f)
	}
	for i, want := range map[int]string{1: "over the 100 bytes limit", 2: "a file type the model cannot read", 3: "more than the 3 files"} {
		if f := in.Files[i]; f.Data != nil || !strings.Contains(f.Note, want) {
			t.Errorf("file %d = %+v, want no bytes and a note saying %q", i, f, want)
		}
	}
	if d := env.srv.Downloads(); len(d) != 1 || d[0].Token != "xoxb-test" {
		t.Errorf("downloads %+v, want notes.txt alone, with the bot token", d)
	}
}

// TestSharedFileNeedsTheToken: the fake serves a shared file only with the
// bot token, as Slack serves url_private_download.
func TestSharedFileNeedsTheToken(t *testing.T) {
	srv := slacktest.NewServer(slacktest.Options{BotToken: "xoxb-right"})
	defer srv.Close()
	u := srv.ShareFile("a.png", "image/png", []byte("png"))["url_private_download"].(string)
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 403}, {"Bearer xoxb-wrong", 403}, {"Bearer xoxb-right", 200}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == 200) != (string(body) == "png") {
			t.Errorf("GET with %q = %d %q, want %d", tc.auth, resp.StatusCode, body, tc.want)
		}
	}
}
