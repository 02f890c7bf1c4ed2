// Package telegram is the Telegram adapter: a bot of the Bot API
// (github.com/go-telegram/bot) that hands messages to core and shows what
// agents write.
//
//	update (getUpdates long poll, or webhook) ──► normalize ──► core.Submit
//	callback_query (a button) ───────────────────────────────► core.Act
//	delivery ──► Post / stream (sendMessage, then editMessageText) ──► chat
//
// Receiving: by long polling (the default) one instance at a time holds
// the poll lease (Options.Poller) and asks Telegram past an update (which
// confirms it) only once core has it; Submit deduplicates by update_id,
// so a takeover or a crash repeats nothing and loses nothing. With a webhook
// (Options.WebhookURL) every instance takes updates, each checked against
// the secret token in constant time.
//
// Showing: Markdown becomes Telegram HTML (plain text when Telegram cannot
// parse it), split at 4,096 characters; buttons become an inline keyboard
// whose callback_data (64 bytes at most) packs the action and value;
// files go by sendPhoto or sendDocument. Messages to one chat are paced
// within Telegram's limits (about one a second, twenty a minute in a
// group) and a 429 is waited out for its retry_after.
//
// What happens on failure: Telegram has no idempotency key and a bot
// cannot read a chat's history, so unlike Slack (a lookup before a
// re-post) and Discord (a nonce) a message cannot be found again once its
// id is lost. Delivery records every message id the moment Telegram
// answers, and a restart edits a recorded message rather than posting
// again: a reply killed mid-stream ends as one whole message. The one
// window left is between Telegram creating a message and the record of
// its id (a few milliseconds): a crash exactly there leaves that message
// behind and posts the reply again.
package telegram
