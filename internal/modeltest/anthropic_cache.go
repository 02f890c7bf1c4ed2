package modeltest

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// PromptBlock is one block of an Anthropic prompt in the order the API
// caches it: each tool, each system block, then each message's content
// blocks. JSON is the block as sent without its cache_control (a message's
// block carries its message's index and role), so two requests share a
// cached prefix exactly when their leading blocks' JSON is equal.
type PromptBlock struct {
	JSON       []byte
	Breakpoint bool // it carried cache_control
}

// AnthropicPrompt splits an Anthropic Messages request into its prompt
// blocks (nil if the body is not JSON).
func (r Request) AnthropicPrompt() []PromptBlock {
	body := r.JSON()
	if body == nil {
		return nil
	}
	return anthropicPrompt(body)
}

func anthropicPrompt(body map[string]any) []PromptBlock {
	var out []PromptBlock
	add := func(block map[string]any, wrap func(map[string]any) any) {
		b := map[string]any{}
		for k, v := range block {
			if k != "cache_control" {
				b[k] = v
			}
		}
		out = append(out, PromptBlock{JSON: []byte(mustJSON(wrap(b))), Breakpoint: block["cache_control"] != nil})
	}
	same := func(b map[string]any) any { return b }
	for _, t := range asList(body["tools"]) {
		add(asMap(t), same)
	}
	switch sys := body["system"].(type) {
	case string:
		add(map[string]any{"type": "text", "text": sys}, same)
	case []any:
		for _, b := range sys {
			add(asMap(b), same)
		}
	}
	for i, mv := range asList(body["messages"]) {
		m := asMap(mv)
		wrap := func(b map[string]any) any { return map[string]any{"message": i, "role": m["role"], "block": b} }
		switch c := m["content"].(type) {
		case string:
			add(map[string]any{"type": "text", "text": c}, wrap)
		case []any:
			for _, b := range c {
				add(asMap(b), wrap)
			}
		}
	}
	return out
}

// promptCache is the fake's prompt cache, which works as Anthropic
// documents its own: a request writes the prefix ending at each of its
// cache_control breakpoints to the cache, and reads the longest prefix that
// was written before, looking for one at each breakpoint and at up to 20
// block boundaries before it. The usage reports what was read
// (cache_read_input_tokens), what was written past it up to the last
// breakpoint (cache_creation_input_tokens) and the rest (input_tokens).
// Unlike the real API it has no minimum cacheable length and never
// expires, so tests see the arithmetic alone.
type promptCache struct {
	mu   sync.Mutex
	seen map[[32]byte]bool
}

// cacheLookback is how many block boundaries before a breakpoint are
// checked for a hit.
const cacheLookback = 20

// usage reads and writes the cache for one request and returns its usage,
// total being the request's whole input in tokens.
func (c *promptCache) usage(body map[string]any, total int64) Usage {
	blocks := anthropicPrompt(body)
	hashes := make([][32]byte, len(blocks))
	tokens := make([]int64, len(blocks)+1) // tokens[i]: the blocks before i
	seed, _ := json.Marshal(body["model"]) // another model has its own cache
	prev := sha256.Sum256(seed)
	var breakpoints []int
	for i, b := range blocks {
		prev = sha256.Sum256(append(prev[:], b.JSON...))
		hashes[i] = prev
		tokens[i+1] = tokens[i] + estimate(len(b.JSON))
		if b.Breakpoint {
			breakpoints = append(breakpoints, i)
		}
	}
	if len(breakpoints) == 0 {
		return Usage{InputTokens: total}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[[32]byte]bool{}
	}
	hit := -1
	for _, bp := range breakpoints {
		for p := bp; p >= 0 && p >= bp-cacheLookback; p-- {
			if p > hit && c.seen[hashes[p]] {
				hit = p
				break
			}
		}
	}
	last := breakpoints[len(breakpoints)-1]
	for _, bp := range breakpoints {
		c.seen[hashes[bp]] = true
	}
	u := Usage{CacheReadTokens: tokens[hit+1], CacheWriteTokens: tokens[last+1] - tokens[hit+1]}
	u.InputTokens = max(total-u.CacheReadTokens-u.CacheWriteTokens, tokens[len(blocks)]-tokens[last+1], 1)
	return u
}
