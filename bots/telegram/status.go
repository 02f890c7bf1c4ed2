package telegram

import (
	"context"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboardhq/switchboard/bots"
)

// typingEvery is how often "typing…" is sent while a status is set:
// Telegram shows a chat action for five seconds or until a message comes.
const typingEvery = 4 * time.Second

// typingMax stops a typing indicator nobody cleared.
const typingMax = 10 * time.Minute

type typingLoop struct{ cancel context.CancelFunc }

type typingLoops struct {
	mu    sync.Mutex
	loops map[string]*typingLoop
}

func (t *typingLoops) stop(chat string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.loops[chat]; l != nil {
		l.cancel()
		delete(t.loops, chat)
	}
}

func (t *typingLoops) stopAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, l := range t.loops {
		l.cancel()
		delete(t.loops, k)
	}
}

// SetStatus implements bots.StatusSetter: Telegram has no status line, so
// a status shows as "typing…" in the chat (or topic) until it is cleared
// or the reply arrives.
func (a *Adapter) SetStatus(ctx context.Context, to bots.Target, status string) error {
	p, err := a.placeOf(to)
	if err != nil {
		return err
	}
	if status == "" {
		a.typing.stop(p.chat)
		return nil
	}
	a.typing.mu.Lock()
	if a.typing.loops[p.chat] != nil {
		a.typing.mu.Unlock()
		return nil
	}
	if !a.enter() {
		a.typing.mu.Unlock()
		return nil
	}
	lctx, cancel := context.WithTimeout(a.ctx, typingMax)
	a.typing.loops[p.chat] = &typingLoop{cancel: cancel}
	a.typing.mu.Unlock()
	go func() {
		defer a.leave()
		defer cancel()
		tick := time.NewTicker(typingEvery)
		defer tick.Stop()
		for {
			_, err := a.api.SendChatAction(lctx, &tgbot.SendChatActionParams{ChatID: p.chatID, MessageThreadID: p.topic, Action: models.ChatActionTyping})
			if err != nil && lctx.Err() == nil {
				a.log.DebugContext(lctx, "telegram chat action", "chat_id", p.chat, "error", err)
			}
			select {
			case <-lctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return nil
}
