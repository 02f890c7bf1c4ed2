// Package discordtest is a fake Discord for tests: a REST API under /api/v9
// and a gateway WebSocket, both on one local httptest server, that the real
// discordgo client talks to. It keeps the parts of Discord's wire format and
// limits that an adapter can get wrong (2,000-character content, five action
// rows of five buttons, 100-character custom ids, one response per
// interaction, 429 with retry_after, RESUME replaying missed dispatches) and
// records every REST call so tests can assert what reached "Discord".
//
// A test starts one with NewServer, points the adapter's APIURL at
// Server.URL, and drives it with UserMessage, ClickButton, SlashCommand,
// JoinGuild, Dispatch, Drop and Reconnect. Nothing here is meant for production.
package discordtest
