package voice_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/discord/voice"
	"github.com/switchboardhq/switchboard/internal/discordtest"
)

const (
	guildID   = 123456789012345678
	channelID = 234567890123456789
	botID     = 345678901234567890
	memberID  = 456789012345678901
)

type heard struct {
	user  uint64
	frame []byte
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// TestConnAgainstFakeVoiceServer connects to the fake voice server: the
// handshake (hello, identify, ready, IP discovery, select protocol,
// session description), DAVE (the member in the channel commits our
// addition, we join by its Welcome, the transition is executed), then an
// Opus frame each way through DAVE and transport encryption over UDP.
func TestConnAgainstFakeVoiceServer(t *testing.T) {
	srv := discordtest.NewVoiceServer(t, channelID, memberID)
	frames := make(chan heard, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := voice.Dial(ctx, voice.ConnOptions{
		Endpoint: srv.URL, ServerID: guildID, ChannelID: channelID, UserID: botID,
		SessionID: "session", Token: srv.Token,
		OnFrame: func(user uint64, f []byte) { frames <- heard{user, bytes.Clone(f)} },
		Logger:  slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	for !c.Ready() || !srv.Executed() {
		select {
		case <-ctx.Done():
			t.Fatalf("DAVE not ready (server executed the transition: %v; server errors: %v)", srv.Executed(), srv.Errors())
		case <-c.Done():
			t.Fatalf("connection ended: %v", c.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}

	sent := []byte("\xfc\xff\xfe an opus frame from the member")
	if err := srv.Speak(sent); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-frames:
		if h.user != memberID || !bytes.Equal(h.frame, sent) {
			t.Fatalf("heard %q from %d, want %q from %d", h.frame, h.user, sent, memberID)
		}
	case <-ctx.Done():
		t.Fatalf("heard nothing; server errors %v", srv.Errors())
	}

	mine := []byte("\xfc\xff\xfe an opus frame from the bot")
	if err := c.SendOpus(mine); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-srv.Heard():
		if !bytes.Equal(got, mine) {
			t.Fatalf("the member heard %q, want %q", got, mine)
		}
	case <-ctx.Done():
		t.Fatalf("the member heard nothing; server errors %v", srv.Errors())
	}
	if errs := srv.Errors(); len(errs) > 0 {
		t.Fatalf("server errors: %v", errs)
	}
}

func TestConnOptionsValidate(t *testing.T) {
	if _, err := voice.Dial(context.Background(), voice.ConnOptions{}); err == nil {
		t.Fatal("dialled without an endpoint")
	}
}
