package bench

import (
	"errors"
	"net/http"
	"time"
)

// SlackFake is a running fake of Slack's Web API, for the ack figure: the
// service it measures answers the mentions it is sent through it.
type SlackFake interface {
	APIURL() string
	Close()
}

// SlackFakes are what the ack figure needs of a fake Slack. A release
// binary has none: the fakes are test code (internal/slacktest), linked
// only into tests and into a binary built with -tags benchfakes, which
// register them through package internal/bench/benchfakes.
type SlackFakes struct {
	// Start starts a fake Web API for the bot token, bot user and team.
	Start func(botToken, botUserID, teamID string) SlackFake
	// EventBody is the JSON of an event_callback carrying event.
	EventBody func(teamID, eventID string, event map[string]any) []byte
	// Signed is a POST of body to url signed with secret as Slack signs.
	Signed func(url, secret string, now time.Time, body []byte) *http.Request
}

var slackFakes *SlackFakes

// RegisterSlackFakes makes the ack figure measure; without it the figure
// reports itself skipped.
func RegisterSlackFakes(f SlackFakes) { slackFakes = &f }

var errNoSlackFake = errors.New("this binary was built without the fake Slack the ack figure posts to; build one with `go build -tags benchfakes ./cmd/switchboard`, or run `BENCH_FIGURE=ack go test -run XXX -bench BenchmarkFigure -benchtime 1x ./internal/bench`")
