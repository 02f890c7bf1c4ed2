// Package cards is the platform-neutral model of a structured result: a card
// an agent posts instead of prose when its answer is a set of things (hotels,
// flights, a drafted email, a stock quote, a briefing).
//
// The flow is:
//
//	model ─► post_result(Result) ─► Validate ─► Stamp(Result, Library) ─► Stamped
//	                                    │                                   │
//	                         tool error to the model            entry of kind "card"
//	                                                                        │
//	                       bots/slack/slackcard.Render ◄────────────────────┤
//	                   bots/discord/discordcard.Render ◄────────────────────┘
//
// A Result names a template from a curated Library. Stamping resolves the
// template into a Layout and copies it into the Stamped card together with the
// data, so the card is self-contained: it renders the same on every platform,
// today and after its template is edited or deleted. A template that is
// unknown at stamp time falls back to the default layout of the result's
// kind, then to the generic layout; a renderer that meets a damaged layout
// falls back to the generic layout too. A card never shows raw data.
//
// Buttons carry no arguments through the platform: a button's action_id or
// custom_id is "card:<entry-id>:<action-id>" (see ActionID), and whoever
// handles the click loads the entry to find the declared action.
//
// A button may open a Form instead of acting at once: its id is then
// "form:<entry-id>:<action-id>" (FormActionID), so a platform that must
// answer the click with the form itself (Discord) knows before it asks
// core. Form.Parse checks the submitted answers and types them; a
// platform without modal windows shows Stamped.WithoutForms, which asks
// the questions in text.
//
// This package imports no platform SDK and nothing from headless: renderers
// take the server-side sparkline renderer as a SparklineFunc.
package cards
