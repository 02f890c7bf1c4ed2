// Package discord is Switchboard's Discord adapter, built on discordgo. It
// keeps a gateway connection (guild messages, DMs, message content), turns
// messages, button clicks and slash commands into core.Inbound and
// core.Action, and implements the bots contract outbound: Post, Update,
// streaming by throttled edits, and the typing indicator as status.
//
// What counts as addressed to the bot: a mention, a DM, and any message in
// a channel listed in Options.Channels (or a thread under one) arrive with
// Inbound.Mentioned set. Every other message is submitted too, with
// Mentioned false, so core can answer in threads it is engaged in and mark
// the rest Ignored. Dedupe is core's (EventID is the message id).
//
// Threads: a message in a thread arrives with Channel = the parent channel
// and Thread = the thread's channel id, the same shape as a Slack thread.
// In channels listed in Options.ThreadOnMention a top-level message
// addressed to the bot starts a thread on it, and Thread names that thread.
//
// Places: a forum post's first message (its id is the thread's) is
// addressed with Options.ForumPosts; a reply to the bot's or an agent's
// message with Options.ReplyIsMention. Where only the person installed the
// app (a group DM, a guild the bot is not in) /ask is answered through the
// interaction's follow-ups (via.go), since the bot cannot post there.
//
// Identity and cards: with Options.AgentWebhooks a reply with a
// bots.Identity goes through the channel's webhook under the agent's name
// and avatar, and later edits and deletes go the same way (via.go); a card
// is drawn in Components V2 and falls back to embeds when it does not fit.
//
// Limits: a text longer than 2,000 characters is split on paragraph, line,
// sentence or word boundaries, closing and reopening code fences across
// parts; buttons go in action rows of five, at most five rows; a button's
// ActionID and Value travel in its 100-character custom_id. discordgo's
// rate-limit buckets pace requests; a 429 on a post or an edit is waited
// out (retry_after, at most a minute) and the request sent again, at most
// five times and never past the request's context. Other calls use
// discordgo's own retry, which has no cap.
//
// What happens on failure: a dropped gateway is resumed by discordgo (the
// same session and sequence, so Discord replays what was missed, and core's
// dedupe absorbs any repeat). A failed Submit is logged; Discord does not
// redeliver a message, so that message is lost to the bot. A click whose Act
// fails gets a private "try again" note.
package discord
