package discord

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
)

// via is how a message reaches Discord and how it is edited later: as the
// bot (channel messages), through a channel webhook under an agent's name
// and avatar, or as a follow-up of an interaction (where only the user
// installed the app, the bot cannot post into the channel at all).
type via struct {
	hook   *webhook // set: a webhook message
	thread string   // the thread a webhook message sits in ("" for none)
	name   string   // the name a webhook message shows
	avatar string
	// interaction is set for follow-ups of an interaction.
	interaction *discordgo.Interaction
	// v2 is set once the message carries IS_COMPONENTS_V2, which an edit
	// can never remove.
	v2 bool
}

// webhook is a channel webhook the application owns.
type webhook struct{ id, token string }

// WebhookName is the name the adapter gives the webhooks it creates; each
// message then shows the agent's own name.
const WebhookName = "Switchboard"

// webhookRetry is how long a channel where the bot may not manage
// webhooks is left alone before it is tried again.
const webhookRetry = 10 * time.Minute

// interactionTTL is how long an interaction token can send follow-ups
// (15 minutes on Discord), with a margin.
const interactionTTL = 14 * time.Minute

type hookEntry struct {
	hook   *webhook
	denied time.Time // when set: no webhook here until webhookRetry after it
}

type interactionEntry struct {
	i       *discordgo.Interaction
	expires time.Time
}

// routes remembers how the adapter's recent messages were sent, so edits
// and deletes go the same way. A message it does not remember (made by an
// earlier process) is found again from Discord (recoverVia).
type routes struct {
	mu           sync.Mutex
	hooks        map[string]hookEntry        // by parent channel
	ownHooks     map[string]bool             // webhook ids the application owns
	messages     map[string]via              // by message id
	interactions map[string]interactionEntry // by channel id
}

const maxRemembered = 10000

func (r *routes) remember(msgID string, v via) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.messages == nil || len(r.messages) >= maxRemembered {
		r.messages = map[string]via{}
	}
	r.messages[msgID] = v
}

func (r *routes) lookup(msgID string) (via, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.messages[msgID]
	return v, ok
}

func (r *routes) forget(msgID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.messages, msgID)
}

// isOwnHook reports whether a webhook id is one of the application's.
func (r *routes) isOwnHook(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ownHooks[id]
}

// rememberInteraction makes later posts to channelID go through the
// interaction's follow-ups until its token expires.
func (a *Adapter) rememberInteraction(channelID string, i *discordgo.Interaction) {
	a.routes.mu.Lock()
	defer a.routes.mu.Unlock()
	if a.routes.interactions == nil || len(a.routes.interactions) >= maxRemembered {
		a.routes.interactions = map[string]interactionEntry{}
	}
	a.routes.interactions[channelID] = interactionEntry{i: i, expires: a.now().Add(interactionTTL)}
}

func (a *Adapter) interactionFor(channelID string) *discordgo.Interaction {
	a.routes.mu.Lock()
	defer a.routes.mu.Unlock()
	e, ok := a.routes.interactions[channelID]
	if !ok || a.now().After(e.expires) {
		return nil
	}
	return e.i
}

var forbiddenWebhookName = regexp.MustCompile(`(?i)clyde|discord`)

// viaFor picks how a post to a target goes: an interaction's follow-ups
// where only the user installed the app; a webhook of the channel under
// the agent's identity when Options.AgentWebhooks is on and the bot may
// manage webhooks there; the bot otherwise.
func (a *Adapter) viaFor(ctx context.Context, to bots.Target, channelID string, id *bots.Identity, ephemeral bool) via {
	if ephemeral {
		return via{}
	}
	if i := a.interactionFor(channelID); i != nil {
		return via{interaction: i}
	}
	if id == nil || !a.opts.AgentWebhooks || to.Workspace == "" || to.Channel == "" {
		return via{}
	}
	hook := a.webhookFor(ctx, to.Channel)
	if hook == nil {
		return via{}
	}
	v := via{hook: hook, thread: to.Thread, avatar: id.IconURL}
	if name := shorten(id.Name, 80); name != "" && !forbiddenWebhookName.MatchString(name) {
		v.name = name
	}
	return v
}

// webhookFor returns the application's webhook in a channel (not a
// thread), reusing one it made before or making one. Where the bot lacks
// Manage Webhooks it returns nil and the post goes out as the bot; the
// channel is tried again after webhookRetry.
func (a *Adapter) webhookFor(ctx context.Context, channelID string) *webhook {
	a.routes.mu.Lock()
	e, ok := a.routes.hooks[channelID]
	a.routes.mu.Unlock()
	switch {
	case ok && e.hook != nil:
		return e.hook
	case ok && a.now().Sub(e.denied) < webhookRetry:
		return nil
	}
	hook, err := a.findOrCreateWebhook(ctx, channelID)
	a.routes.mu.Lock()
	defer a.routes.mu.Unlock()
	if a.routes.hooks == nil {
		a.routes.hooks = map[string]hookEntry{}
		a.routes.ownHooks = map[string]bool{}
	}
	if err != nil {
		a.log.WarnContext(ctx, "no discord webhook in this channel; agents post as the bot here (give the bot Manage Webhooks)",
			"channel_id", channelID, "err", err)
		a.routes.hooks[channelID] = hookEntry{denied: a.now()}
		return nil
	}
	a.routes.hooks[channelID] = hookEntry{hook: hook}
	a.routes.ownHooks[hook.id] = true
	return hook
}

func (a *Adapter) findOrCreateWebhook(ctx context.Context, channelID string) (*webhook, error) {
	hooks, err := a.s.ChannelWebhooks(channelID, discordgo.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("listing webhooks of %s: %w", channelID, err)
	}
	app := a.applicationID()
	for _, h := range hooks {
		if h.ApplicationID == app && h.Token != "" {
			return &webhook{id: h.ID, token: h.Token}, nil
		}
	}
	h, err := a.s.WebhookCreate(channelID, WebhookName, "", discordgo.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("creating a webhook in %s: %w", channelID, err)
	}
	return &webhook{id: h.ID, token: h.Token}, nil
}

// sendVia sends one message and remembers how, for later edits.
func (a *Adapter) sendVia(ctx context.Context, v via, channelID string, p outgoing) (*discordgo.Message, error) {
	var msg *discordgo.Message
	var err error
	switch {
	case v.interaction != nil:
		if err := p.bufferCardFiles(); err != nil {
			return nil, err
		}
		err = withRateLimit(ctx, func(opts ...discordgo.RequestOption) error {
			var err error
			msg, err = a.s.FollowupMessageCreate(v.interaction, true, p.webhookParams(v), opts...)
			return err
		})
	case v.hook != nil:
		if err := p.bufferCardFiles(); err != nil {
			return nil, err
		}
		err = withRateLimit(ctx, func(opts ...discordgo.RequestOption) error {
			var err error
			msg, err = a.executeWebhook(v.hook, v.thread, p.webhookParams(v), opts...)
			return err
		})
		if code := restErrorCode(err); code == discordgo.ErrCodeUnknownWebhook {
			// Someone deleted the webhook: forget it, and post as the bot.
			a.dropWebhook(v.hook)
			return a.sendVia(ctx, via{}, channelID, p)
		}
	default:
		msg, err = a.sendMessage(ctx, channelID, p)
	}
	if err != nil {
		return nil, err
	}
	v.v2 = p.flags&discordgo.MessageFlagsIsComponentsV2 != 0
	a.routes.remember(msg.ID, v)
	return msg, nil
}

func (a *Adapter) dropWebhook(h *webhook) {
	a.routes.mu.Lock()
	defer a.routes.mu.Unlock()
	for ch, e := range a.routes.hooks {
		if e.hook != nil && e.hook.id == h.id {
			delete(a.routes.hooks, ch)
		}
	}
}

func (p *outgoing) webhookParams(v via) *discordgo.WebhookParams {
	return &discordgo.WebhookParams{
		Content: p.content, Username: v.name, AvatarURL: v.avatar,
		Embeds: p.embeds, Components: p.components, Flags: p.flags,
		Files: discordFiles(p.files, p.cardFiles), AllowedMentions: noMentions(),
	}
}

// editBody is an edit as Discord takes it. Content is a pointer without
// omitempty: a Components V2 edit must send "content": null, which
// discordgo's edit structs cannot.
type editBody struct {
	Content         *string                           `json:"content"`
	Embeds          []*discordgo.MessageEmbed         `json:"embeds"`
	Components      []discordgo.MessageComponent      `json:"components"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
}

// editVia replaces a message the adapter sent, the way it was sent. A
// message once sent as Components V2 stays so: a text-only edit of it is
// sent as a text display.
func (a *Adapter) editVia(ctx context.Context, ref bots.MessageRef, p outgoing) error {
	v, ok := a.routes.lookup(ref.ID)
	if !ok {
		var err error
		if v, err = a.recoverVia(ctx, ref); err != nil {
			return err
		}
	}
	if v.v2 && p.flags&discordgo.MessageFlagsIsComponentsV2 == 0 {
		p = p.asV2()
	}
	if err := p.bufferCardFiles(); err != nil {
		return err
	}
	body := editBody{Embeds: p.embeds, Components: p.components, Flags: p.flags, AllowedMentions: noMentions()}
	if body.Embeds == nil {
		body.Embeds = []*discordgo.MessageEmbed{}
	}
	if body.Components == nil {
		body.Components = []discordgo.MessageComponent{}
	}
	if p.flags&discordgo.MessageFlagsIsComponentsV2 == 0 {
		content := p.content
		body.Content = &content
	}
	var uri, bucket string
	switch {
	case v.interaction != nil:
		uri = discordgo.EndpointFollowupMessageActions(v.interaction.AppID, v.interaction.Token, ref.ID)
		bucket = discordgo.EndpointWebhookToken("", "")
	case v.hook != nil:
		uri = discordgo.EndpointWebhookMessage(v.hook.id, v.hook.token, ref.ID)
		bucket = discordgo.EndpointWebhookToken("", "")
		if v.thread != "" {
			uri += "?thread_id=" + url.QueryEscape(v.thread)
		}
	default:
		uri = discordgo.EndpointChannelMessage(ref.Channel, ref.ID)
		bucket = discordgo.EndpointChannelMessage(ref.Channel, "")
	}
	files := discordFiles(p.files, nil)
	err := withRateLimit(ctx, func(opts ...discordgo.RequestOption) error {
		if len(files) > 0 {
			ct, mp, err := discordgo.MultipartBodyWithJSON(body, discordFiles(p.files, nil))
			if err != nil {
				return fmt.Errorf("encoding edit with files: %w", err)
			}
			_, err = a.s.RequestRaw("PATCH", uri, ct, mp, bucket, 0, opts...)
			return err
		}
		_, err := a.s.RequestWithBucketID("PATCH", uri, body, bucket, opts...)
		return err
	})
	if err != nil {
		return err
	}
	v.v2 = v.v2 || p.flags&discordgo.MessageFlagsIsComponentsV2 != 0
	a.routes.remember(ref.ID, v)
	return nil
}

// asV2 turns a text part into Components V2 for a message that already
// carries the flag: the text as a text display, the button rows after it.
func (p outgoing) asV2() outgoing {
	var comps []discordgo.MessageComponent
	if p.content != "" {
		comps = append(comps, discordgo.TextDisplay{Content: p.content})
	}
	comps = append(comps, p.components...)
	p.content, p.embeds, p.components = "", nil, comps
	p.flags |= discordgo.MessageFlagsIsComponentsV2
	return p
}

// deleteVia deletes a message the adapter sent, the way it was sent.
func (a *Adapter) deleteVia(ctx context.Context, ref bots.MessageRef) error {
	v, ok := a.routes.lookup(ref.ID)
	if !ok {
		var err error
		if v, err = a.recoverVia(ctx, ref); err != nil {
			return err
		}
	}
	var err error
	switch {
	case v.interaction != nil:
		err = a.s.FollowupMessageDelete(v.interaction, ref.ID, discordgo.WithContext(ctx))
	case v.hook != nil:
		uri := discordgo.EndpointWebhookMessage(v.hook.id, v.hook.token, ref.ID)
		if v.thread != "" {
			uri += "?thread_id=" + url.QueryEscape(v.thread)
		}
		_, err = a.s.RequestWithBucketID("DELETE", uri, nil, discordgo.EndpointWebhookToken("", ""), discordgo.WithContext(ctx))
	default:
		err = a.s.ChannelMessageDelete(ref.Channel, ref.ID, discordgo.WithContext(ctx))
	}
	if err == nil {
		a.routes.forget(ref.ID)
	}
	return err
}

// recoverVia finds how an earlier process sent a message: it reads the
// message, and a webhook message is edited through the application's
// webhook of its channel (the parent, for a thread).
func (a *Adapter) recoverVia(ctx context.Context, ref bots.MessageRef) (via, error) {
	m, err := a.s.ChannelMessage(ref.Channel, ref.ID, discordgo.WithContext(ctx))
	if err != nil {
		return via{}, fmt.Errorf("reading message %s to edit it: %w", ref.ID, err)
	}
	v := via{v2: m.Flags&discordgo.MessageFlagsIsComponentsV2 != 0}
	if m.WebhookID == "" {
		return v, nil
	}
	parent := ref.Channel
	if info, err := a.channel(ctx, ref.Channel); err == nil && info.thread {
		parent, v.thread = info.parentID, ref.Channel
	}
	hook := a.webhookFor(ctx, parent)
	if hook == nil || hook.id != m.WebhookID {
		return via{}, errors.New("message " + ref.ID + " was posted by a webhook the application cannot use")
	}
	v.hook = hook
	return v, nil
}

// isOwnWebhookMessage reports whether a message came from one of the
// application's webhooks (the agents' own posts), which the adapter must
// never take as input, even with AllowBots.
func (a *Adapter) isOwnWebhookMessage(ctx context.Context, m *discordgo.Message) bool {
	if m.WebhookID == "" {
		return false
	}
	if m.WebhookID == a.applicationID() || a.routes.isOwnHook(m.WebhookID) {
		return true
	}
	if !a.opts.AgentWebhooks {
		return false
	}
	parent := m.ChannelID
	if info, err := a.channel(ctx, m.ChannelID); err == nil && info.thread {
		parent = info.parentID
	}
	h := a.webhookFor(ctx, parent)
	return h != nil && h.id == m.WebhookID
}
