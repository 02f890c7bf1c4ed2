//go:build chaos

package chaos

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboardhq/switchboard/internal/matrixtest"
)

// TestKillMatrix: kill -9 while a reply streams into a Matrix thread by
// edits of one message, restart, and the room ends up with the whole reply
// in one message: the restart's stream sends its first message with the
// dead one's transaction id, gets that message back from the homeserver
// and edits it, and the final edit replaces it.
func TestKillMatrix(t *testing.T) {
	runChaos(t, newHarness(t, database(t), newMatrix(t), discordChunkDelay), syscall.SIGKILL)
}

// matrix is the fake homeserver, which outlives every service process;
// each mention is in a room of its own, answered in a thread on it.
type matrix struct {
	fake  *matrixtest.Server
	alice matrixtest.User
}

func newMatrix(t *testing.T) *matrix {
	fake := matrixtest.NewServer(t)
	return &matrix{fake: fake, alice: fake.NewUser("alice", "alice")}
}

func (p *matrix) env() []string {
	return []string{
		"MATRIX_HOMESERVER_URL=" + p.fake.URL,
		"MATRIX_USER_ID=" + p.fake.Bot.ID,
		"MATRIX_ACCESS_TOKEN=" + p.fake.Token,
	}
}

// connected holds until the process being started syncs live: it has made
// two /sync requests and holds one open, so it sees the next message.
func (p *matrix) connected() func() bool {
	before := p.fake.Syncs().Requests
	return func() bool {
		st := p.fake.Syncs()
		return st.Live > 0 && st.Requests >= before+2
	}
}

func (p *matrix) streams() bool { return false }

func (p *matrix) mention(_ *harness, run int) string {
	room := p.fake.CreateRoom(p.alice, matrixtest.RoomOptions{Name: fmt.Sprintf("chaos %d", run)})
	p.fake.Mention(room, p.alice, fmt.Sprintf("question number %d", run))
	return room
}

func (p *matrix) texts(room string) []string {
	var out []string
	for _, m := range p.fake.BotMessages(room) {
		out = append(out, m.Body)
	}
	return out
}

func (p *matrix) midStream(room string, atLeast int) bool { return midStreamIn(p.texts(room), atLeast) }
func (p *matrix) replied(room string) bool                { return repliedIn(p.texts(room)) }
func (p *matrix) count(room string) counts                { return countIn(p.texts(room)) }

func (p *matrix) describe(room string) string {
	var b strings.Builder
	for _, m := range p.fake.BotMessages(room) {
		fmt.Fprintf(&b, "  id %s thread %s edits %d: %q\n", m.ID, m.Thread, m.Edits, m.Body)
	}
	for _, c := range p.fake.Calls() {
		if strings.Contains(c.Path, "/rooms/"+room+"/") && c.Method != http.MethodGet {
			fmt.Fprintf(&b, "  call %s %s %s -> %d: %.120s\n", c.At.Format("15:04:05.000"), c.Method, c.Path, c.Status, c.Body)
		}
	}
	return b.String()
}
