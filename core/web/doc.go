// Package web is how agents reach the web: the web_fetch tool (a page as
// Markdown or text) and the web_search tool (a configured search
// provider), and the Guard under both, which keeps every connection away
// from the service's own network.
//
// A URL comes from a model, and a model reads pages anyone can write, so
// each URL is treated as hostile. The Guard is the dialer of the fetch
// client: it resolves the host itself, refuses the connection when any
// address the name resolves to is loopback, private, link-local (the
// cloud metadata service lives there), shared (CGNAT), multicast,
// unspecified or reserved, and then dials the very address it checked,
// never the name again. Because the check sits in the dialer, it runs for
// every connection the client makes: the first one, each redirect, and
// each reconnection, so neither a redirect nor a DNS answer that changes
// between lookups (rebinding) can get around it. Hosts the operator names
// in web.allow_hosts (an intranet, a test's local server) are exempt.
//
// What happens on failure: a refused address is a *RefusedError naming
// the host, the address and why; like any tool error it goes back to the
// model as the call's result, and the turn goes on.
package web
