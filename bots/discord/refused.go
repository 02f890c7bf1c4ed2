package discord

import (
	"errors"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
)

// refusal marks err as bots.ErrRefused when Discord's answer says the
// request can never succeed as it is: the bot lacks access or a
// permission in the channel, the channel or thread is gone, locked or
// archived, the message is empty, too large or invalid, a file too large
// or refused. Anything else (rate limits, 5xx, timeouts) is returned as
// it is, to be retried.
func refusal(err error) error {
	if err == nil || errors.Is(err, bots.ErrRefused) {
		return err
	}
	var re *discordgo.RESTError
	if !errors.As(err, &re) {
		return err
	}
	if reason := refusedReason(re); reason != "" {
		return bots.Refused(reason, err)
	}
	return err
}

// refusedReason is what people are told in place of a message Discord
// refused for good, or "" when the error may pass.
func refusedReason(re *discordgo.RESTError) string {
	code := 0
	if re.Message != nil {
		code = re.Message.Code
	}
	switch code {
	case discordgo.ErrCodeMissingAccess:
		return "the bot has no access to this channel"
	case discordgo.ErrCodeMissingPermissions:
		return "the bot lacks a permission it needs in this channel"
	case discordgo.ErrCodeUnknownChannel:
		return "the channel was not found"
	case discordgo.ErrCodeCannotSendMessagesToThisUser:
		return "Discord does not let the bot message this user"
	case discordgo.ErrCodeCannotSendMessagesInVoiceChannel, discordgo.ErrCodeCannotExecuteActionOnThisChannelType:
		return "the bot cannot post in this kind of channel"
	case discordgo.ErrCodePerformedOperationOnArchivedThread:
		return "the thread is archived"
	case discordgo.ErrCodeThreadIsLocked:
		return "the thread is locked"
	case discordgo.ErrCodeRequestEntityTooLarge, discordgo.ErrCodeFileUploadedExceedsTheMaximumSize:
		return "it is larger than Discord accepts"
	case discordgo.ErrCodeInvalidFileUploaded:
		return "Discord refused the file"
	case discordgo.ErrCodeMaximumNumberOfAttachmentsInAMessageReached:
		return "it has more files than one Discord message holds"
	case discordgo.ErrCodeCannotSendEmptyMessage:
		return "the message is empty"
	case discordgo.ErrCodeInvalidFormBody:
		return "Discord refused its content (invalid form body)"
	}
	if re.Response != nil && re.Response.StatusCode == http.StatusRequestEntityTooLarge {
		return "it is larger than Discord accepts"
	}
	return ""
}
