package discord

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
)

// Discord's JSON error codes that can never succeed as they are become
// bots.ErrRefused with a reason; the rest (rate limits, 5xx) are retried.
func TestRefusalClassifiesDiscordErrors(t *testing.T) {
	rest := func(status, code int) error {
		return &discordgo.RESTError{Response: &http.Response{StatusCode: status}, Message: &discordgo.APIErrorMessage{Code: code, Message: "x"}}
	}
	for _, tc := range []struct {
		err     error
		refused bool
		reason  string
	}{
		{rest(403, discordgo.ErrCodeMissingAccess), true, "no access"},
		{rest(403, discordgo.ErrCodeMissingPermissions), true, "permission"},
		{rest(404, discordgo.ErrCodeUnknownChannel), true, "not found"},
		{rest(413, discordgo.ErrCodeRequestEntityTooLarge), true, "larger"},
		{rest(400, discordgo.ErrCodeInvalidFormBody), true, "invalid form body"},
		{rest(400, discordgo.ErrCodePerformedOperationOnArchivedThread), true, "archived"},
		{&discordgo.RESTError{Response: &http.Response{StatusCode: http.StatusRequestEntityTooLarge}}, true, "larger"},
		{rest(500, 0), false, ""},
		{rest(502, 0), false, ""},
		{&discordgo.RateLimitError{}, false, ""},
		{errors.New("i/o timeout"), false, ""},
	} {
		got := refusal(fmt.Errorf("posting: %w", tc.err))
		var re *bots.RefusedError
		if errors.As(got, &re) != tc.refused || errors.Is(got, bots.ErrRefused) != tc.refused {
			t.Errorf("refusal(%v) = %v; want refused %v", tc.err, got, tc.refused)
			continue
		}
		if tc.refused && !strings.Contains(re.Reason, tc.reason) {
			t.Errorf("refusal(%v) reason %q; want it to say %q", tc.err, re.Reason, tc.reason)
		}
	}
}
