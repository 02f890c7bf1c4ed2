// Package matrix is Switchboard's Matrix adapter, built on mautrix-go's
// client (no end-to-end encryption: the bot answers in unencrypted rooms
// and says, once per room, that it cannot read encrypted ones). It syncs
// as one bot account (MATRIX_USER_ID with MATRIX_ACCESS_TOKEN on
// MATRIX_HOMESERVER_URL), turns messages, reactions and invites into
// core.Inbound and core.Action, and implements the bots contract outbound:
// Post, Update, streaming by throttled edits (m.replace), files, typing as
// status, and options as numbered reactions.
//
// What counts as addressed to the bot: a message whose m.mentions names
// the bot (Element's pills), one that names it in its body (its user id,
// or its display name or localpart before a colon when the sender's client
// does not send m.mentions), a reply to one of the bot's messages, and any
// message in a direct chat: a room the bot's m.direct account data lists,
// which it fills as the spec asks of clients (an invite with is_direct it
// accepted, a direct chat it opened to reach a person). Other messages are
// submitted with Mentioned false, so core answers in threads it is
// engaged in and ignores the rest. Dedupe is core's: EventID is the
// event_id.
//
// Threads: in a group room the answer goes into a thread rooted at the
// question (m.thread), as Element users expect of a bot: the room stays
// readable and the conversation continues in the thread without a
// mention. A message already in a thread is answered there. In a direct
// chat the answer goes in the main timeline, unless asked in a thread.
// Inbound: Channel is the room id; Thread the thread's root event id (a
// top-level room message's own id); "" in a direct chat.
//
// Buttons become numbered options: the message lists them (1️⃣ Red,
// 2️⃣ Blue), carries them in its content under app.switchboard.options,
// and the bot reacts with each number so that a click is one tap. A
// person's reaction (an m.annotation) with one of the numbers is the
// click: the adapter reads the options from the message it annotates, so a
// click works after a restart and on any instance, and hands it to core
// once (core settles a choice once; the reaction's event_id is the
// action's EventID).
//
// Exactly once: every event is sent with PUT /send/{type}/{txnId}, which
// the homeserver makes idempotent per access token and transaction id. A
// post's transaction ids come from its idempotency key (the entry id,
// bots.Message.Key) and the part's index, so a post repeated after a crash
// gets the first one's event back; a stream's messages take the stream's
// key (bots.StreamKeyer), and the edit that finishes a stream takes the
// final entry's. Interim stream edits use fresh ids: an edit repeated is
// harmless, and one shown again after a reset must not be swallowed.
//
// Sync: one instance syncs at a time, under a named lease in the store
// (Options.Sync); the others only post. The sync token (next_batch) is
// saved in the store after a batch is handed to core, so a restart, or
// the instance that takes the lease over, continues from it: nothing is
// lost, and what a crash makes it see again is dropped by core's dedupe
// on event_id. A first start with no token skips the room history and
// answers only what comes after.
//
// Limits: 429 M_LIMIT_EXCEEDED is waited out (retry_after_ms, or
// Retry-After; at most a minute, five times, never past the request's
// context). A text too long for one event (Options.MaxMessageChars) is
// split on paragraph, line or word boundaries.
//
// What happens on failure: a failed sync is retried with backoff; a
// failed Submit holds the batch back (its token is not saved) and it is
// tried again, at most a few times, after which it is logged and passed.
// A refused post (M_FORBIDDEN, M_TOO_LARGE, an unknown room) is a
// bots.Refused: delivery shows a notice in its place and goes on.
package matrix
