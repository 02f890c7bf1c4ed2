package discord

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
)

// maxAppliedTags is how many tags Discord lets a forum post carry.
const maxAppliedTags = 5

// forumTagger remembers the forum posts already tagged, so a post is
// looked at once per process, not on every reply.
type forumTagger struct {
	mu   sync.Mutex
	done map[string]bool
}

// first reports whether thread has not been looked at yet, and marks it.
func (f *forumTagger) first(thread string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done == nil || len(f.done) >= maxRemembered {
		f.done = map[string]bool{}
	}
	if f.done[thread] {
		return false
	}
	f.done[thread] = true
	return true
}

// tagForumPost gives a post of a forum (or media) channel that an agent
// answers in the forum's tags chosen for it: those named in
// Options.ForumTags, and one named like the agent (the name it posts
// under: its display name, else its name), both matched without regard to
// case. Tags already on the post stay; Discord allows five in all, and
// tags past that are left off. It runs once per post per process and
// never fails a reply: without Manage Threads (needed to edit a post the
// bot did not start) it logs and goes on.
func (a *Adapter) tagForumPost(ctx context.Context, to bots.Target, id *bots.Identity) {
	if to.Thread == "" || (len(a.opts.ForumTags) == 0 && (id == nil || id.Name == "")) || !a.forumTags.first(to.Thread) {
		return
	}
	info, err := a.channel(ctx, to.Thread)
	if err != nil || !info.thread || info.parentID == "" {
		return
	}
	if parent, err := a.channel(ctx, info.parentID); err != nil || !isForum(parent.kind) {
		return
	}
	want := map[string]bool{}
	for _, n := range a.opts.ForumTags {
		want[strings.ToLower(strings.TrimSpace(n))] = true
	}
	if id != nil && id.Name != "" {
		want[strings.ToLower(id.Name)] = true
	}
	// Fresh from Discord: the state's copies may predate a tag change.
	forum, err := a.s.Channel(info.parentID, discordgo.WithContext(ctx))
	if err != nil {
		a.log.WarnContext(ctx, "reading a forum's tags", "forum_id", info.parentID, "err", err)
		return
	}
	post, err := a.s.Channel(to.Thread, discordgo.WithContext(ctx))
	if err != nil {
		a.log.WarnContext(ctx, "reading a forum post's tags", "thread_id", to.Thread, "err", err)
		return
	}
	applied := slices.Clone(post.AppliedTags)
	for _, t := range forum.AvailableTags {
		if want[strings.ToLower(t.Name)] && !slices.Contains(applied, t.ID) && len(applied) < maxAppliedTags {
			applied = append(applied, t.ID)
		}
	}
	if len(applied) == len(post.AppliedTags) {
		return
	}
	if _, err := a.s.ChannelEditComplex(to.Thread, &discordgo.ChannelEdit{AppliedTags: &applied}, discordgo.WithContext(ctx)); err != nil {
		a.log.WarnContext(ctx, "tagging a forum post (the bot needs Manage Threads to tag posts it did not start)",
			"thread_id", to.Thread, "err", err)
	}
}
