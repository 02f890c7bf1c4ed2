package store

import (
	"fmt"
	"strings"
)

// Place is where a conversation's messages go on a platform: a channel or a
// thread in a workspace, or a person's DM. It is the one value every package
// passes around for "where"; the strings it is stored as are encoded and
// decoded here and nowhere else.
type Place struct {
	Platform  string // "slack", "discord", "api", ...; "" for none
	Workspace string // Slack team, Discord guild; "" where there is none
	// Channel is the channel (or DM channel) the platform gave; "" with User
	// set means "this person's DM", opened when something is posted.
	Channel string
	// Thread is the Slack thread_ts or the Discord thread channel id; "" for
	// the channel itself.
	Thread string
	// User is the person whose DM this is, when Channel is not known.
	User string
	// Run makes the place of one scheduled run unique (each run is a
	// conversation of its own) while its messages go where the rest of the
	// place says. It is never shown to a platform.
	Run string
}

// Author is who wrote an entry: a person (on any platform), an agent, or
// the system. It is stored as "user:<id>", "agent:<name>" or "system",
// made and read only here.
type Author string

// SystemAuthor writes notices and errors no person or agent wrote.
const SystemAuthor Author = "system"

const agentPrefix = "agent:"

// UserAuthor is the author of what a person wrote.
func UserAuthor(id string) Author { return Author(userPrefix + id) }

// AgentAuthor is the author of what an agent wrote.
func AgentAuthor(name string) Author { return Author(agentPrefix + name) }

// User returns the person who wrote it, if a person did.
func (a Author) User() (string, bool) { return strings.CutPrefix(string(a), userPrefix) }

// Agent returns the agent that wrote it, if an agent did.
func (a Author) Agent() (string, bool) { return strings.CutPrefix(string(a), agentPrefix) }

// The prefixes a Place's User and Run are stored under in the channel and
// thread columns.
const (
	userPrefix = "user:"
	runPrefix  = "run:"
	runSep     = "|" + runPrefix // between a Thread and a Run
)

// DM returns the place of a person's direct messages on a platform.
func DM(platform, workspace, user string) Place {
	return Place{Platform: platform, Workspace: workspace, User: user}
}

// IsDM reports whether the place is a person's DM known only by the person.
func (p Place) IsDM() bool { return p.Channel == "" && p.User != "" }

// IsZero reports whether the place names nowhere: the conversation is not
// bound to a platform.
func (p Place) IsZero() bool { return p == Place{} }

// String is a readable form for logs and errors.
func (p Place) String() string {
	ch, th := p.Columns()
	s := p.Platform + ":" + p.Workspace + "/" + ch
	if th != "" {
		s += "/" + th
	}
	return s
}

// Validate checks that the place can be stored and found again: a platform
// and a channel or a person, and no separator inside the parts that carry
// one when stored.
func (p Place) Validate() error {
	switch {
	case p.Platform == "":
		return fmt.Errorf("%w: place has no Platform", ErrInvalid)
	case p.Channel == "" && p.User == "":
		return fmt.Errorf("%w: place on %s has neither Channel nor User", ErrInvalid, p.Platform)
	case p.Channel != "" && p.User != "":
		return fmt.Errorf("%w: place on %s has both Channel %q and User %q", ErrInvalid, p.Platform, p.Channel, p.User)
	case strings.Contains(p.Thread, runSep):
		return fmt.Errorf("%w: place Thread %q holds %q", ErrInvalid, p.Thread, runSep)
	case strings.HasPrefix(p.Channel, userPrefix):
		return fmt.Errorf("%w: place Channel %q starts with %q; set User instead", ErrInvalid, p.Channel, userPrefix)
	case strings.HasPrefix(p.Thread, runPrefix):
		return fmt.Errorf("%w: place Thread %q starts with %q; set Run instead", ErrInvalid, p.Thread, runPrefix)
	}
	return nil
}

// Columns encodes the place's channel and thread as drivers store them: a
// DM known by its person is channel "user:<id>", a run's place is thread
// "run:<key>", or "<thread>|run:<key>" for a run in a thread.
func (p Place) Columns() (channel, thread string) {
	channel, thread = p.Channel, p.Thread
	if channel == "" && p.User != "" {
		channel = userPrefix + p.User
	}
	switch {
	case p.Run != "" && thread != "":
		thread += runSep + p.Run
	case p.Run != "":
		thread = runPrefix + p.Run
	}
	return channel, thread
}

// PlaceFromColumns decodes what Columns encoded.
func PlaceFromColumns(platform, workspace, channel, thread string) Place {
	p := Place{Platform: platform, Workspace: workspace, Channel: channel, Thread: thread}
	if user, ok := strings.CutPrefix(channel, userPrefix); ok {
		p.Channel, p.User = "", user
	}
	if run, ok := strings.CutPrefix(thread, runPrefix); ok {
		p.Thread, p.Run = "", run
	} else if t, run, ok := strings.Cut(thread, runSep); ok {
		p.Thread, p.Run = t, run
	}
	return p
}
