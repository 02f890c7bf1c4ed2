// Package benchfakes registers the fakes some `switchboard bench` figures
// post to (a fake Slack for the ack figure). It is imported by tests and,
// with -tags benchfakes, by cmd/switchboard: a release binary links no
// test code.
package benchfakes

import (
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

func init() {
	bench.RegisterSlackFakes(bench.SlackFakes{
		Start: func(botToken, botUserID, teamID string) bench.SlackFake {
			return slacktest.NewServer(slacktest.Options{BotToken: botToken, BotUserID: botUserID, TeamID: teamID})
		},
		EventBody: func(teamID, eventID string, event map[string]any) []byte {
			return slacktest.MustJSON(slacktest.EventCallback(teamID, eventID, event))
		},
		Signed: func(url, secret string, now time.Time, body []byte) *http.Request {
			return slacktest.NewSignedRequest(url, "application/json", secret, now, body)
		},
	})
}
