//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/voicenotetest"
	"github.com/switchboardhq/switchboard/store"
)

// heard is what the held transcriber hears in every voice note.
const heard = "remind me to water the plants at five"

// heardReply is the reply a person sees to a voice note: the transcript
// quoted above the agent's answer.
var heardReply = "> 🎙️ “" + heard + "”\n\n" + reply

// TestKillVoiceNote: kill -9 while a Slack audio clip is being
// transcribed (the OpenAI-compatible transcription server holds the
// request), restart, and the DM ends up with the reply, the transcript
// quoted above it, exactly once, and the log with the spoken message
// exactly once.
func TestKillVoiceNote(t *testing.T) {
	runVoiceChaos(t, &slackVoice{slack: newSlack(t)})
}

// TestKillDiscordVoiceMessage: the same with a Discord voice message.
func TestKillDiscordVoiceMessage(t *testing.T) {
	runVoiceChaos(t, &discordVoice{discord: newDiscord(t)})
}

// voicePlatform is a platform a person sends voice notes on.
type voicePlatform interface {
	platform
	// voiceNote sends voice note number run (file is its audio in the
	// platform's format) in a conversation of its own and returns where
	// the reply goes.
	voiceNote(h *harness, run int, file []byte) string
	// place is where's store place, to find its conversation.
	place(where string) store.Place
	// encoding is the file format of the platform's voice notes.
	encoding() string
	// answers is the agent's answers: block for runs notes.
	answers(runs int) string
	// texts are what the bot's messages in where show.
	texts(where string) []string
}

func runVoiceChaos(t *testing.T, plat voicePlatform) {
	voicenotetest.Need(t, "espeak-ng", "ffmpeg")
	runs := chaosRuns(t)
	file := voicenotetest.Encode(t, voicenotetest.WAV(t, heard), plat.encoding())
	tr := newHeldTranscriber(t, heard)
	h := newHarness(t, database(t), plat, chunkDelay)
	h.setConfig(t, "access:\n  dm_policy: open\nagents:\n  - name: atlas\n"+plat.answers(runs)+
		"    voice:\n      transcribe: openai:whisper-1\n")
	h.env = append(h.env, "OPENAI_BASE_URL="+tr.srv.URL+"/v1", "OPENAI_API_KEY=sk-chaos")
	h.start()

	var tl tally
	for i := range runs {
		run := fmt.Sprintf("run %d", i)
		release := tr.hold()
		before := tr.count()
		where := plat.voiceNote(h, i, file)
		h.mark(fmt.Sprintf("%s: voice note in %s", run, where))
		if !poll(waitLong, func() bool { return tr.count() > before }) {
			t.Fatalf("%s: the service did not ask for a transcription within %s", run, waitLong)
		}
		// The request is held: the service is transcribing now.
		h.stop(syscall.SIGKILL)
		release()
		c, latency, ok := h.restartAndCountVoice(run, where, plat)
		tl.add(c, latency, ok)
	}
	h.stop(syscall.SIGTERM)
	if tr.count() < 2*runs {
		t.Errorf("the transcriber was asked %d times in %d runs; want each note asked again after its kill", tr.count(), runs)
	}
	tl.report(t, plat)
}

// restartAndCountVoice restarts the service and counts what a person sees
// of the reply to the voice note in where, and what the log keeps of the
// note: a second user entry for it is a doubled message.
func (h *harness) restartAndCountVoice(run, where string, plat voicePlatform) (c counts, latency time.Duration, ok bool) {
	h.t.Helper()
	restarted := time.Now()
	h.start()
	if poll(waitLong, func() bool { return slices.Contains(plat.texts(where), heardReply) }) {
		latency, ok = time.Since(restarted), true
	}
	h.waitIdle()
	texts := plat.texts(where)
	if !slices.Contains(texts, heardReply) {
		c.lost = 1
	}
	if len(texts) > 1 {
		c.doubled = 1
	}
	for _, s := range texts {
		if s != heardReply && strings.HasPrefix(heardReply, s) {
			c.cut++
		}
	}
	ctx := context.Background()
	b, err := h.st.BindingFind(ctx, &store.BindingFindParams{Place: plat.place(where)})
	if err != nil {
		h.t.Errorf("%s: the voice note's conversation in %s: %v", run, where, err)
		c.lost = 1
	} else {
		es, err := h.st.EntryList(ctx, &store.EntryListParams{ConversationID: b.ConversationID})
		if err != nil {
			h.t.Fatal(err)
		}
		users := 0
		for _, e := range es {
			if e.Kind == store.EntryUser {
				users++
			}
		}
		if users != 1 {
			h.t.Errorf("%s: the log holds %d messages of the person's; want the voice note once", run, users)
			c.doubled = 1
		}
	}
	if c.lost+c.doubled+c.cut > 0 {
		h.t.Errorf("%s (%s): lost %d, doubled %d, cut %d; messages:\n%s", run, where, c.lost, c.doubled, c.cut, plat.describe(where))
	}
	return c, latency, ok
}

// setConfig replaces the service's switchboard.yaml.
func (h *harness) setConfig(t *testing.T, body string) {
	for _, kv := range h.env {
		if path, ok := strings.CutPrefix(kv, "SWITCHBOARD_CONFIG="); ok {
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("the harness has no SWITCHBOARD_CONFIG")
}

// slackVoice: each voice note is an audio clip in a DM of its own.
type slackVoice struct{ *slack }

func (p *slackVoice) encoding() string { return "webm" }

func (p *slackVoice) answers(int) string { return "    answers: {default: true}\n" }

func (p *slackVoice) voiceNote(h *harness, run int, file []byte) string {
	h.t.Helper()
	dm := fmt.Sprintf("D0VOICE%04d", run)
	ts := fmt.Sprintf("%d.%06d", time.Now().Unix(), 100+run)
	clip := p.fake.ShareAudioClip("audio_message.webm", "audio/webm", file, 3000)
	ev := map[string]any{
		"type": "message", "subtype": "file_share", "channel_type": "im", "user": alice, "text": "",
		"ts": ts, "channel": dm, "team": team, "event_ts": ts, "files": []any{clip},
	}
	body := slacktest.MustJSON(slacktest.EventCallback(team, fmt.Sprintf("EvVoice%d%d", run, time.Now().UnixNano()), ev))
	req := slacktest.NewSignedRequest("http://"+h.addr+"/slack/events", "application/json", secret, time.Now(), body)
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatalf("posting a slack event: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("POST /slack/events answered %d, want 200", resp.StatusCode)
	}
	return dm
}

func (p *slackVoice) place(dm string) store.Place {
	return store.PlaceFromColumns("slack", team, dm, "")
}

// texts are what the bot's messages in the DM show.
func (p *slackVoice) texts(dm string) []string {
	var out []string
	for _, m := range p.fake.Messages(dm) {
		if m.User == botUser && !m.Deleted {
			out = append(out, slackShown(m))
		}
	}
	return out
}

func (p *slackVoice) describe(dm string) string {
	var b strings.Builder
	for _, m := range p.fake.Messages(dm) {
		fmt.Fprintf(&b, "  ts %s user %s streamed %v streaming %v deleted %v: %q\n", m.TS, m.User, m.Streamed, m.Streaming, m.Deleted, slackShown(m))
	}
	return b.String()
}

// discordVoice: each voice note is a voice message in a channel of its
// own, one the agent answers every message in (a voice message cannot
// mention anyone).
type discordVoice struct{ *discord }

func (p *discordVoice) encoding() string { return "ogg" }

func discordVoiceChannel(run int) string { return fmt.Sprintf("40000000000%08d", run) }

func (p *discordVoice) answers(runs int) string {
	var ids []string
	for i := range runs {
		ids = append(ids, `"`+discordVoiceChannel(i)+`"`)
	}
	return "    answers: {default: true, channels: [" + strings.Join(ids, ", ") + "]}\n"
}

func (p *discordVoice) voiceNote(h *harness, run int, file []byte) string {
	ch := discordVoiceChannel(run)
	p.fake.UserVoiceMessage(ch, discordAlice, file, 2.5, []byte{10, 80, 120, 60, 5})
	return ch
}

func (p *discordVoice) place(ch string) store.Place {
	return store.PlaceFromColumns("discord", discordtest.DefaultGuildID, ch, "")
}

func (p *discordVoice) texts(ch string) []string { return p.discord.texts(ch) }

// heldTranscriber is an OpenAI-compatible transcription server
// (POST /v1/audio/transcriptions) that holds each request while held is
// set: until released, or until the caller goes away (a killed service).
type heldTranscriber struct {
	srv  *httptest.Server
	text string

	mu       sync.Mutex
	requests int
	release  chan struct{} // nil: answer at once
}

func newHeldTranscriber(t *testing.T, text string) *heldTranscriber {
	tr := &heldTranscriber{text: text}
	tr.srv = httptest.NewServer(http.HandlerFunc(tr.serve))
	t.Cleanup(func() {
		tr.mu.Lock()
		if tr.release != nil {
			close(tr.release)
			tr.release = nil
		}
		tr.mu.Unlock()
		tr.srv.Close()
	})
	return tr
}

// hold makes the next requests wait; the function returned lets them go.
func (tr *heldTranscriber) hold() func() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ch := make(chan struct{})
	tr.release = ch
	return func() {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if tr.release == ch {
			close(ch)
			tr.release = nil
		}
	}
}

func (tr *heldTranscriber) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.requests
}

func (tr *heldTranscriber) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, _, err := r.FormFile("file"); err != nil {
		http.Error(w, "no file: "+err.Error(), http.StatusBadRequest)
		return
	}
	tr.mu.Lock()
	tr.requests++
	release := tr.release
	tr.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"text": tr.text})
}
