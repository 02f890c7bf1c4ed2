// Package headless holds the server equivalents of frontend tools and the
// swap table that decides, per context, which version of a tool the model
// is offered.
//
// A frontend tool needs a live client: in "web" and "api" the turn pauses
// and hands the call to the client. Slack, Discord, the terminal and the
// scheduler have no such client, so each frontend tool is swapped for its
// server equivalent for that context (ask_user becomes buttons and a pause
// until the click; render_chart becomes a PNG rendered here), or, when the
// table has none, is not offered at all. A swapped tool keeps its name and
// its input schema, so a conversation resumed in another process, or a
// tool call replayed from the log, finds the same tool by name.
//
//	context    ask_user                   render_chart
//	web, api   frontend (client answers)  frontend (client draws)
//	slack      question pause (buttons)   server PNG attachment
//	discord    question pause (buttons)   server PNG attachment
//	terminal   question pause (numbered)  server PNG attachment
//	scheduler  not offered                server PNG attachment
//	mcp        not offered                server PNG attachment
package headless

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/switchboardhq/switchboard/core/tool"
)

// HasClient reports whether a context has a live client that can run
// frontend tools. Unknown contexts have none: offering a tool nobody can
// run would strand the turn.
func HasClient(context tool.ContextName) bool {
	return context == tool.ContextWeb || context == tool.ContextAPI
}

func knownContext(context tool.ContextName) bool {
	return slices.Contains(tool.Contexts(), context)
}

// ErrDuplicateSwap is returned when a context already has an equivalent
// for a tool name.
var ErrDuplicateSwap = errors.New("swap already registered")

// Swapper is the swap table: for a frontend tool's name and a context, the
// server tool to offer instead. It is safe for concurrent use.
type Swapper struct {
	mu    sync.RWMutex
	swaps map[string]map[tool.ContextName]*tool.Tool // tool name -> context -> equivalent
}

// NewSwapper returns an empty table. BuiltinSwapper returns one holding
// the equivalents of the built-in frontend tools.
func NewSwapper() *Swapper {
	return &Swapper{swaps: map[string]map[tool.ContextName]*tool.Tool{}}
}

// Add makes t the equivalent, in context, of the frontend tool of the same
// name. t must be a server tool: the point of a swap is that it runs
// without a client.
func (s *Swapper) Add(context tool.ContextName, t *tool.Tool) error {
	switch {
	case t == nil:
		return errors.New("adding swap: tool is nil")
	case !knownContext(context):
		return fmt.Errorf("adding swap for %s: context %q must be one of %v", t.Name(), context, tool.Contexts())
	case t.Tier() != tool.TierServer:
		return fmt.Errorf("adding swap for %s in %s: the equivalent must be a server tool, got tier %q", t.Name(), context, t.Tier())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byCtx := s.swaps[t.Name()]
	if byCtx == nil {
		byCtx = map[tool.ContextName]*tool.Tool{}
		s.swaps[t.Name()] = byCtx
	}
	if _, ok := byCtx[context]; ok {
		return fmt.Errorf("adding swap for %s in %s: %w", t.Name(), context, ErrDuplicateSwap)
	}
	byCtx[context] = t
	return nil
}

// resolve returns what the model is offered under t's name in context.
func (s *Swapper) resolve(t *tool.Tool, context tool.ContextName) (*tool.Tool, bool) {
	if t.Tier() != tool.TierFrontend {
		return t, true
	}
	s.mu.RLock()
	eq, ok := s.swaps[t.Name()][context]
	s.mu.RUnlock()
	if ok {
		return eq, true
	}
	if HasClient(context) {
		return t, true
	}
	return nil, false
}

// ToolsFor returns the tools offered to the model in context, sorted by
// name: server tools as registered, each frontend tool either as is (a
// context with a client), swapped for its equivalent, or left out.
func (s *Swapper) ToolsFor(r *tool.Registry, context tool.ContextName) []*tool.Tool {
	all := r.List()
	out := make([]*tool.Tool, 0, len(all))
	for _, t := range all {
		if eq, ok := s.resolve(t, context); ok {
			out = append(out, eq)
		}
	}
	// Sorted by name already, as r.List() is and names do not change.
	return out
}

// Get finds the tool offered under name in context, as ToolsFor would
// list it. The engine uses it to run a call, including one resumed from a
// saved conversation.
func (s *Swapper) Get(r *tool.Registry, context tool.ContextName, name string) (*tool.Tool, bool) {
	t, ok := r.Get(name)
	if !ok {
		return nil, false
	}
	return s.resolve(t, context)
}

var builtin = sync.OnceValues(func() (*Swapper, error) {
	s := NewSwapper()
	if err := AddBuiltinSwaps(s); err != nil {
		return nil, err
	}
	return s, nil
})

// BuiltinSwapper returns a new table holding the server equivalents of the
// built-in frontend tools, to which callers may add their own.
func BuiltinSwapper() (*Swapper, error) {
	s := NewSwapper()
	if err := AddBuiltinSwaps(s); err != nil {
		return nil, err
	}
	return s, nil
}

// ToolsFor is Swapper.ToolsFor with the built-in table.
func ToolsFor(r *tool.Registry, context tool.ContextName) []*tool.Tool {
	s, err := builtin()
	if err != nil {
		// The built-in definitions are fixed at compile time and covered by
		// tests; failing to build them is a programming error.
		panic(fmt.Sprintf("headless: building the built-in swap table: %v", err))
	}
	return s.ToolsFor(r, context)
}

// Get is Swapper.Get with the built-in table.
func Get(r *tool.Registry, context tool.ContextName, name string) (*tool.Tool, bool) {
	s, err := builtin()
	if err != nil {
		panic(fmt.Sprintf("headless: building the built-in swap table: %v", err))
	}
	return s.Get(r, context, name)
}
