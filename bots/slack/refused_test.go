package slack

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
)

// Slack's answers that can never succeed as they are become bots.ErrRefused
// with a reason people can act on; those that may pass are left to retry.
func TestRefusalClassifiesSlackErrors(t *testing.T) {
	for _, tc := range []struct {
		err     error
		refused bool
		reason  string // a part of the reason
	}{
		{slack.SlackErrorResponse{Err: "missing_scope", Needed: "files:write"}, true, "files:write scope"},
		{slack.SlackErrorResponse{Err: "missing_scope"}, true, "lacks a scope"},
		{slack.SlackErrorResponse{Err: "not_in_channel"}, true, "not a member"},
		{slack.SlackErrorResponse{Err: "channel_not_found"}, true, "not found"},
		{slack.SlackErrorResponse{Err: "is_archived"}, true, "archived"},
		{slack.SlackErrorResponse{Err: "msg_too_long"}, true, "too long"},
		{slack.SlackErrorResponse{Err: "file_too_large"}, true, "size"},
		{slack.SlackErrorResponse{Err: "file_type_not_allowed"}, true, "type of file"},
		{slack.SlackErrorResponse{Err: "restricted_action"}, true, "does not let the app post"},
		{slack.SlackErrorResponse{Err: "internal_error"}, false, ""},
		{slack.SlackErrorResponse{Err: "fatal_error"}, false, ""},
		{slack.SlackErrorResponse{Err: "ratelimited"}, false, ""},
		{slack.SlackErrorResponse{Err: "invalid_auth"}, false, ""}, // the workspace is gone, not this message
		{slack.SlackErrorResponse{Err: "not_authed"}, false, ""},
		{&slack.RateLimitedError{}, false, ""},
		{errors.New("connection reset by peer"), false, ""},
	} {
		wrapped := fmt.Errorf("posting: %w", tc.err)
		got := refusal(wrapped)
		var re *bots.RefusedError
		isRefused := errors.As(got, &re)
		if isRefused != tc.refused || errors.Is(got, bots.ErrRefused) != tc.refused {
			t.Errorf("refusal(%v) = %v; refused %v, want %v", tc.err, got, isRefused, tc.refused)
			continue
		}
		if !errors.Is(got, tc.err) && !errors.Is(got, wrapped) {
			t.Errorf("refusal(%v) = %v; want Slack's error kept in the chain", tc.err, got)
		}
		if tc.refused && !strings.Contains(re.Reason, tc.reason) {
			t.Errorf("refusal(%v) reason %q; want it to say %q", tc.err, re.Reason, tc.reason)
		}
	}
	if refusal(nil) != nil {
		t.Error("refusal(nil) is not nil")
	}
}
