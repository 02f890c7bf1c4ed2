package discord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/discord/discordcard"
	"github.com/switchboardhq/switchboard/bots/mdsplit"
)

// noMentions keeps a message from pinging anyone: the model's text may
// contain @everyone or user ids, and a bot should not notify people by
// accident.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// outgoing is one Discord message of a bots.Message.
type outgoing struct {
	content    string
	embeds     []*discordgo.MessageEmbed
	components []discordgo.MessageComponent
	files      []bots.File
	// cardFiles are files the card renderer made (sparkline images).
	cardFiles []*discordgo.File
	// nonce, when set, makes the send idempotent (see nonceFor).
	nonce string
	// flags are the message flags: IS_COMPONENTS_V2 for a card drawn in
	// Components V2 (then content and embeds stay empty).
	flags discordgo.MessageFlags
	// attachments is the files' metadata, sent as the attachments array:
	// a voice message's duration and waveform (voice.go).
	attachments []voiceMeta
}

// render splits m into the messages Discord will show: the text in parts of
// at most 2,000 characters, with the card's embeds, the buttons and the
// files on the last part, so they sit under the whole answer.
func (a *Adapter) render(m *bots.Message) ([]outgoing, error) {
	comps, err := components(m.Buttons)
	if err != nil {
		return nil, err
	}
	var embeds []*discordgo.MessageEmbed
	var cardFiles []*discordgo.File
	var flags discordgo.MessageFlags
	text := m.Text
	if text == "" {
		// File captions go in the message that carries the files: one call.
		var captions []string
		for _, f := range m.Files {
			if f.Caption != "" {
				captions = append(captions, f.Caption)
			}
		}
		text = strings.Join(captions, "\n")
	}
	if m.Card != nil && m.Card.Stamped != nil {
		if v2, files, ok := a.renderV2(m.Card, comps); ok {
			// The card is the message; the text is only the fallback for
			// clients that cannot show it.
			return []outgoing{{components: v2, cardFiles: files, files: m.Files, flags: discordgo.MessageFlagsIsComponentsV2}}, nil
		}
		e, cardRows, files, err := a.opts.RenderCardFunc(m.Card)
		switch {
		case err != nil:
			a.log.Warn("rendering card as discord embeds failed; posting its text", "err", err)
		case len(cardRows)+len(comps) > MaxActionRows:
			a.log.Warn("card buttons and message buttons exceed discord's rows; posting the card's text", "rows", len(cardRows)+len(comps))
		case len(e) > 0:
			// The embed carries the card; the text is only the fallback
			// for clients that cannot show it.
			embeds, cardFiles, text = e, files, ""
			comps = append(cardRows, comps...)
		}
	}
	parts := mdsplit.Split(text, MaxMessageChars)
	out := make([]outgoing, 0, len(parts)+1)
	for _, p := range parts {
		out = append(out, outgoing{content: p})
	}
	if len(out) == 0 {
		if len(embeds) == 0 && len(m.Files) == 0 && len(cardFiles) == 0 {
			if len(comps) > 0 {
				return nil, fmt.Errorf("%w: buttons need a text or a card to sit under", ErrButtons)
			}
			return nil, errors.New("empty message: no text, card or file")
		}
		out = append(out, outgoing{})
	}
	last := &out[len(out)-1]
	last.embeds, last.components, last.files, last.cardFiles, last.flags = embeds, comps, m.Files, cardFiles, flags
	return out, nil
}

// renderV2 draws a card in Components V2 with the message's own button
// rows after it, unless Options.CardsAsEmbeds is set or the card does not
// fit V2's limits (then the caller draws embeds).
func (a *Adapter) renderV2(card *bots.Card, rows []discordgo.MessageComponent) ([]discordgo.MessageComponent, []*discordgo.File, bool) {
	if a.opts.CardsAsEmbeds {
		return nil, nil, false
	}
	comps, files, err := a.opts.RenderCardV2Func(card)
	if err == nil {
		comps = append(comps, rows...)
		err = discordcard.CheckV2(comps)
	}
	if err != nil {
		a.log.Debug("card does not fit components v2; sending embeds", "err", err)
		return nil, nil, false
	}
	return comps, files, true
}

// bufferCardFiles reads the renderer's card files into memory once, so
// every attempt of a request gets fresh readers (a reader is spent after the
// first attempt).
func (p *outgoing) bufferCardFiles() error {
	if len(p.cardFiles) == 0 {
		return nil
	}
	p.files = p.files[:len(p.files):len(p.files)] // never write into the caller's array
	for _, f := range p.cardFiles {
		data, err := io.ReadAll(f.Reader)
		if err != nil {
			return fmt.Errorf("discord: reading card file %s: %w", f.Name, err)
		}
		p.files = append(p.files, bots.File{Name: f.Name, MimeType: f.ContentType, Data: data})
	}
	p.cardFiles = nil
	return nil
}

func discordFiles(files []bots.File, extra []*discordgo.File) []*discordgo.File {
	out := make([]*discordgo.File, 0, len(files)+len(extra))
	out = append(out, extra...)
	for _, f := range files {
		out = append(out, &discordgo.File{Name: f.Name, ContentType: f.MimeType, Reader: bytes.NewReader(f.Data)})
	}
	return out
}

// targetChannel is the Discord channel a Target names: the thread when
// there is one, else the channel, else a DM with the user.
func (a *Adapter) targetChannel(ctx context.Context, to bots.Target, ephemeral bool) (string, error) {
	if ephemeral && to.UserID != "" {
		// Discord has ephemeral messages only as interaction responses; a
		// private message is the nearest thing outside one.
		return a.dmChannel(ctx, to.UserID)
	}
	switch {
	case to.Thread != "":
		return to.Thread, nil
	case to.Channel != "":
		return to.Channel, nil
	case to.UserID != "":
		return a.dmChannel(ctx, to.UserID)
	default:
		return "", errors.New("target has no channel, thread or user")
	}
}

func (a *Adapter) dmChannel(ctx context.Context, userID string) (string, error) {
	ch, err := a.s.UserChannelCreate(userID, discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("opening a dm with %s: %w", userID, err)
	}
	return ch.ID, nil
}

// Post implements bots.Adapter. A long text becomes several messages; a 429
// is waited out and the request sent again (see withRateLimit).
func (a *Adapter) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	if m == nil {
		return nil, errors.New("discord: posting a nil message")
	}
	parts, err := a.render(m)
	if err != nil {
		return nil, fmt.Errorf("discord: rendering message: %w", err)
	}
	channelID, err := a.targetChannel(ctx, to, m.Ephemeral)
	if err != nil {
		return nil, fmt.Errorf("discord: posting: %w", err)
	}
	a.stopTyping(channelID)
	v := a.viaFor(ctx, to, channelID, m.Identity, m.Ephemeral)
	refs := make([]bots.MessageRef, 0, len(parts))
	for i, p := range parts {
		p.nonce = nonceFor(m.Key, i)
		msg, err := a.sendVia(ctx, v, channelID, p)
		if err != nil {
			return refs, fmt.Errorf("discord: posting part %d of %d to %s: %w", i+1, len(parts), channelID, refusal(err))
		}
		refs = append(refs, bots.MessageRef{Channel: channelID, ID: msg.ID})
	}
	if !m.Ephemeral {
		a.tagForumPost(ctx, to, m.Identity)
		a.postVoice(ctx, channelID, m)
	}
	return refs, nil
}

// Rate-limit retries for posts and edits. discordgo's own retry waits out
// every 429 with no cap and ignores the context, which could hold a
// conversation's delivery forever; these are bounded and cancellable. A 429
// means nothing was posted, so a retry never posts twice.
const (
	maxRateLimitRetries = 5
	maxRateLimitWait    = time.Minute
)

// withRateLimit runs call, waiting out up to maxRateLimitRetries 429s.
func withRateLimit(ctx context.Context, call func(opts ...discordgo.RequestOption) error) error {
	for attempt := 0; ; attempt++ {
		err := call(discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false))
		var rl *discordgo.RateLimitError
		if !errors.As(err, &rl) || attempt >= maxRateLimitRetries {
			return err
		}
		wait := min(max(rl.RetryAfter, 0), maxRateLimitWait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting out a rate limit: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// sendMessage sends p and returns the message Discord answered with: with
// a nonce already used, the message the first send made, as it is now.
func (a *Adapter) sendMessage(ctx context.Context, channelID string, p outgoing) (*discordgo.Message, error) {
	if err := p.bufferCardFiles(); err != nil {
		return nil, err
	}
	var msg *discordgo.Message
	err := withRateLimit(ctx, func(opts ...discordgo.RequestOption) error {
		var err error
		// Files are readers: build the request afresh for every attempt.
		send := &discordgo.MessageSend{
			Content:         p.content,
			Embeds:          p.embeds,
			Components:      p.components,
			Files:           discordFiles(p.files, p.cardFiles),
			AllowedMentions: noMentions(),
			Flags:           p.flags,
		}
		if p.nonce == "" && len(p.attachments) == 0 {
			msg, err = a.s.ChannelMessageSendComplex(channelID, send, opts...)
		} else {
			msg, err = a.sendWithNonce(channelID, send, p.nonce, p.attachments, opts...)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return msg, nil
}

// edit replaces a message's content, embeds and buttons, the way the
// message was sent (see editVia).
func (a *Adapter) edit(ctx context.Context, ref bots.MessageRef, p outgoing) error {
	return a.editVia(ctx, ref, p)
}

// Update implements bots.Editor: the message is replaced whole. A text too
// long for one message is cut, marked with "…", since an edit cannot add
// messages.
func (a *Adapter) Update(ctx context.Context, ref bots.MessageRef, m *bots.Message) error {
	if m == nil {
		return errors.New("discord: updating with a nil message")
	}
	parts, err := a.render(m)
	if err != nil {
		return fmt.Errorf("discord: rendering update: %w", err)
	}
	p := parts[len(parts)-1]
	if len(parts) > 1 && p.flags&discordgo.MessageFlagsIsComponentsV2 == 0 {
		full := m.Text
		if len(p.embeds) > 0 {
			full = ""
		}
		p.content = mdsplit.Truncate(full, MaxMessageChars)
	}
	if err := a.edit(ctx, ref, p); err != nil {
		return fmt.Errorf("discord: updating message %s in %s: %w", ref.ID, ref.Channel, refusal(err))
	}
	return nil
}

// typingLoop keeps Discord's typing indicator on in one channel.
type typingLoop struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func (l *typingLoop) stop() {
	l.once.Do(l.cancel)
	<-l.done
}

// SetStatus implements bots.StatusSetter with the typing indicator: Discord
// has no status text, so any non-empty status shows "typing…", refreshed
// every TypingInterval until the status is cleared with "", a message is
// posted to the channel, or TypingMax passes.
func (a *Adapter) SetStatus(ctx context.Context, to bots.Target, status string) error {
	channelID, err := a.targetChannel(ctx, to, false)
	if err != nil {
		return fmt.Errorf("discord: setting status: %w", err)
	}
	if status == "" {
		a.stopTyping(channelID)
		return nil
	}
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return errors.New("discord: adapter stopped")
	}
	if _, running := a.typing[channelID]; running {
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	// The first indicator is sent here so a failure reaches the caller.
	if err := a.s.ChannelTyping(channelID, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: sending typing to %s: %w", channelID, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, running := a.typing[channelID]; running || a.stopped {
		return nil
	}
	lctx, cancel := context.WithTimeout(a.ctx, a.opts.TypingMax)
	l := &typingLoop{cancel: cancel, done: make(chan struct{})}
	a.typing[channelID] = l
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(l.done)
		defer cancel()
		defer a.forgetTyping(channelID, l)
		t := time.NewTicker(a.opts.TypingInterval)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
				if err := a.s.ChannelTyping(channelID, discordgo.WithContext(lctx)); err != nil && lctx.Err() == nil {
					a.log.WarnContext(lctx, "refreshing discord typing indicator", "channel_id", channelID, "err", err)
				}
			}
		}
	}()
	return nil
}

func (a *Adapter) forgetTyping(channelID string, l *typingLoop) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.typing[channelID] == l {
		delete(a.typing, channelID)
	}
}

// stopTyping ends the typing loop of a channel and waits for it, so no
// indicator is sent after it returns.
func (a *Adapter) stopTyping(channelID string) {
	a.mu.Lock()
	l := a.typing[channelID]
	delete(a.typing, channelID)
	a.mu.Unlock()
	if l != nil {
		l.stop()
	}
}

// MaxMessageChars is Discord's limit on a message's content.
const MaxMessageChars = 2000
