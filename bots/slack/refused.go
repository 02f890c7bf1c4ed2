package slack

import (
	"errors"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
)

// refusal marks err as bots.ErrRefused when Slack's answer says the call
// can never succeed as it is (chat.postMessage, chat.update, the streaming
// methods, files.getUploadURLExternal and files.completeUploadExternal
// share these codes): a scope the app lacks, a channel it is not in or
// that is gone or archived, a message too long, a file too large or of a
// refused type. Anything else (rate limits, internal_error, fatal_error,
// timeouts, a revoked token, which is bots.ErrGone) is returned as it is,
// to be retried.
func refusal(err error) error {
	if err == nil || errors.Is(err, bots.ErrRefused) {
		return err
	}
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return err
	}
	if reason := refusedReason(se); reason != "" {
		return bots.Refused(reason, err)
	}
	return err
}

// refusedReason is what people are told in place of a message Slack
// refused for good, or "" when the error may pass.
func refusedReason(se slack.SlackErrorResponse) string {
	switch se.Err {
	case "missing_scope":
		if se.Needed != "" {
			return "the app lacks the " + se.Needed + " scope"
		}
		return "the app lacks a scope Slack requires for it"
	case "not_allowed_token_type", "no_permission", "access_denied", "team_access_not_granted":
		return "the app is not allowed to do that here (" + se.Err + ")"
	case "not_in_channel":
		return "the app is not a member of this channel"
	case "channel_not_found":
		return "the channel was not found, or the app cannot see it"
	case "is_archived":
		return "the channel is archived"
	case "restricted_action", "restricted_action_read_only_channel", "restricted_action_thread_only_channel",
		"restricted_action_non_threadable_channel", "posting_to_general_channel_denied", "ekm_access_denied":
		return "the workspace does not let the app post here (" + se.Err + ")"
	case "msg_too_long", "msg_blocks_too_long":
		return "it is too long for Slack"
	case "invalid_blocks", "invalid_blocks_format", "invalid_attachments":
		return "Slack refused its layout (" + se.Err + ")"
	case "file_uploads_disabled":
		return "file uploads are turned off in this workspace"
	case "file_too_large", "file_size_invalid", "file_upload_size_restricted":
		return "Slack refused the file's size (" + se.Err + ")"
	case "file_type_not_allowed", "invalid_file_type", "file_uploads_except_images_disabled", "file_type_restricted":
		return "Slack does not accept this type of file here (" + se.Err + ")"
	}
	return ""
}
