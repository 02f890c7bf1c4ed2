//go:build chaos

package chaos

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboardhq/switchboard/internal/telegramtest"
)

// TestKillTelegram: kill -9 while a reply streams into Telegram by
// throttled edits of one message, restart, and the chat ends up with the
// whole reply in one message: the restart edits the recorded message.
//
// The signal lands once the streamed message has been edited at least
// once, so its id was recorded (the delivery records it as soon as
// sendMessage answers, before the next delta). Telegram has no
// idempotency key and no history for bots: a kill between sendMessage
// answering and that record (milliseconds) would leave the message behind
// (see docs/telegram.md); this test does not aim there.
func TestKillTelegram(t *testing.T) {
	runChaos(t, newHarness(t, database(t), newTelegram(t), discordChunkDelay), syscall.SIGKILL)
}

// telegram is the fake Bot API, which outlives every service process;
// each mention is in a private chat of its own.
type telegram struct{ fake *telegramtest.Server }

func newTelegram(t *testing.T) *telegram { return &telegram{fake: telegramtest.NewServer(t)} }

func (p *telegram) env() []string {
	return []string{"TELEGRAM_BOT_TOKEN=" + p.fake.Token, "TELEGRAM_API_URL=" + p.fake.URL}
}

// connected holds until the new process long-polls.
func (p *telegram) connected() func() bool {
	before := p.fake.PollsStarted()
	return func() bool { return p.fake.PollsStarted() > before }
}

func (p *telegram) streams() bool { return false }

func (p *telegram) user(run int) telegramtest.User {
	return telegramtest.User{ID: int64(8000 + run), FirstName: "alice"}
}

func (p *telegram) mention(_ *harness, run int) string {
	u := p.user(run)
	p.fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(u), From: u, Text: fmt.Sprintf("question number %d", run)})
	return fmt.Sprint(u.ID)
}

func (p *telegram) msgs(where string) []telegramtest.Message {
	var id int64
	fmt.Sscan(where, &id)
	return p.fake.BotMessages(id)
}

// midStream: a bot message shows part of the reply and has been edited.
func (p *telegram) midStream(where string, atLeast int) bool {
	for _, m := range p.msgs(where) {
		if m.Edits >= 1 && len(m.Text) > atLeast && len(m.Text) < len(reply) && strings.HasPrefix(reply, m.Text) {
			return true
		}
	}
	return false
}

func (p *telegram) replied(where string) bool { return repliedIn(p.texts(where)) }
func (p *telegram) count(where string) counts { return countIn(p.texts(where)) }

func (p *telegram) texts(where string) []string {
	var out []string
	for _, m := range p.msgs(where) {
		out = append(out, m.Text)
	}
	return out
}

func (p *telegram) describe(where string) string {
	var b strings.Builder
	for _, m := range p.msgs(where) {
		fmt.Fprintf(&b, "  id %d edits %d: %q\n", m.ID, m.Edits, m.Text)
	}
	return b.String()
}
