package modeltest

import (
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
)

// TestAnthropicPromptCache sends a conversation as a client that caches
// does (a breakpoint on the system block and on the end of the history)
// and checks that the fake reads back what an earlier request wrote.
func TestAnthropicPromptCache(t *testing.T) {
	f := NewAnthropic(t)
	f.Default(Reply{Text: "ok"})
	c := anthropicClient(f)
	long := strings.Repeat("stable rules ", 400)
	send := func(history []anthropic.MessageParam, mark bool) anthropic.Usage {
		t.Helper()
		p := anthropicParams()
		p.System = []anthropic.TextBlockParam{{Text: long, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
		msgs := make([]anthropic.MessageParam, len(history))
		copy(msgs, history)
		if mark {
			last := msgs[len(msgs)-1]
			blocks := append([]anthropic.ContentBlockParamUnion{}, last.Content...)
			tb := *blocks[len(blocks)-1].OfText
			tb.CacheControl = anthropic.NewCacheControlEphemeralParam()
			blocks[len(blocks)-1] = anthropic.ContentBlockParamUnion{OfText: &tb}
			msgs[len(msgs)-1] = anthropic.MessageParam{Role: last.Role, Content: blocks}
		}
		p.Messages = msgs
		stream := c.Messages.NewStreaming(context.Background(), p)
		defer stream.Close()
		var msg anthropic.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				t.Fatalf("Accumulate: %v", err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		return msg.Usage
	}
	h1 := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(strings.Repeat("first question ", 100)))}
	u1 := send(h1, true)
	if u1.CacheReadInputTokens != 0 || u1.CacheCreationInputTokens < 1000 {
		t.Fatalf("first request usage = %+v, want nothing read and the system and history written", u1)
	}
	h2 := append(h1, anthropic.NewAssistantMessage(anthropic.NewTextBlock("ok")),
		anthropic.NewUserMessage(anthropic.NewTextBlock("second question")))
	u2 := send(h2, true)
	if u2.CacheReadInputTokens != u1.CacheCreationInputTokens {
		t.Errorf("second request read %d cached tokens, want the %d the first wrote", u2.CacheReadInputTokens, u1.CacheCreationInputTokens)
	}
	if u2.CacheCreationInputTokens == 0 || u2.CacheCreationInputTokens > 50 {
		t.Errorf("second request wrote %d tokens, want only the new turn", u2.CacheCreationInputTokens)
	}
	// Without the history's breakpoint only the system block is read, and
	// nothing is written.
	u3 := send(h2, false)
	if u3.CacheReadInputTokens >= u2.CacheReadInputTokens || u3.CacheReadInputTokens == 0 || u3.CacheCreationInputTokens != 0 {
		t.Errorf("request without a history breakpoint usage = %+v, want the system block read and nothing written", u3)
	}
	// The first request again reads all it wrote and writes nothing.
	u4 := send(h1, true)
	if u4.CacheReadInputTokens != u1.CacheCreationInputTokens || u4.CacheCreationInputTokens != 0 {
		t.Errorf("the first request again: usage %+v, want %d read and nothing written", u4, u1.CacheCreationInputTokens)
	}
}
