// Package slacklimit is Slack's documented size limits, in one place: the
// adapter (bots/slack) and the Block Kit renderer (bots/slack/slackcard)
// keep within them, and the fake Slack (internal/slacktest) rejects what
// exceeds them, so the code and its test double read the same numbers.
//
// Lengths count characters (runes), as Slack does. Sources: the method
// pages (https://api.slack.com/methods/chat.postMessage,
// https://api.slack.com/methods/chat.startStream,
// https://api.slack.com/methods/assistant.threads.setSuggestedPrompts), the
// blocks reference (https://api.slack.com/reference/block-kit/blocks) and
// the elements and composition objects references
// (https://api.slack.com/reference/block-kit/block-elements,
// https://api.slack.com/reference/block-kit/composition-objects).
package slacklimit

import "time"

// A message.
const (
	// MessageText is the most of chat.postMessage's and chat.update's text
	// Slack keeps; it truncates beyond.
	MessageText = 40000
	// Blocks is the most blocks one message may carry.
	Blocks = 50
	// StreamMarkdown is the most markdown_text one chat.startStream,
	// chat.appendStream or chat.stopStream call may carry.
	StreamMarkdown = 12000
	// SuggestedPrompts is the most prompts
	// assistant.threads.setSuggestedPrompts takes.
	SuggestedPrompts = 4
	// MarkdownBlock is the most text one markdown block carries (the
	// cumulative limit of the markdown blocks in one message).
	MarkdownBlock = 12000
	// TaskText is the most characters of a task_update chunk's details or
	// output (https://docs.slack.dev/reference/methods/chat.appendStream).
	TaskText = 256
	// StreamLifetime is how long a streaming message takes appends before
	// Slack ends it: a reply streamed for longer moves on to a new message
	// before then.
	StreamLifetimeSeconds = 300
	// ContextActionsElements is the most elements a context_actions block
	// (feedback buttons) holds.
	ContextActionsElements = 5
)

// StreamCallInterval is the least time between two streaming calls
// (chat.appendStream, or chat.update of a reply streamed by edits) on one
// message: chat.appendStream is a Tier 4 method (100+ a
// minute per workspace, https://docs.slack.dev/reference/methods/chat.appendStream),
// so a stream that called it for every delta would be rate limited.
const StreamCallInterval = 500 * time.Millisecond

// Blocks.
const (
	BlockID         = 255  // block_id of any block
	HeaderText      = 150  // a header block's text
	SectionText     = 3000 // a section block's text
	SectionFields   = 10   // fields in one section block
	FieldText       = 2000 // one section field's text
	ContextElements = 10   // elements in one context block
	ContextText     = 3000 // one text element of a context block
	ActionsElements = 25   // elements in one actions block
)

// Elements.
const (
	ButtonText   = 75   // a button's label
	ActionID     = 255  // an interactive element's action_id
	ButtonValue  = 2000 // a button's value
	ImageAltText = 2000 // an image's alt_text
	ImageURL     = 3000 // an image's image_url
	ImageTitle   = 2000 // an image block's title
)
