package tool

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ErrDuplicate is returned when a tool name is registered twice.
var ErrDuplicate = errors.New("tool already registered")

// Registry holds the tools of a process, by name. Tools are registered at
// start-up and looked up on every turn, including when a saved
// conversation resumes a pending call by its tool name.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
	// unavailable are tools the configuration turns on that this host
	// cannot run, by name: why.
	unavailable map[string]string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]*Tool{}, unavailable: map[string]string{}}
}

// MarkUnavailable records that the tool named name is turned on by the
// configuration but cannot run on this host (the sandbox cannot be set
// up), and why. It is not offered; an agent's tools list may still name it.
func (r *Registry) MarkUnavailable(name, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unavailable[name] = why
}

// Unavailable says why the tool named name was marked unavailable.
func (r *Registry) Unavailable(name string) (why string, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	why, ok = r.unavailable[name]
	return why, ok
}

// Register builds a tool from its definition and typed handler and adds it.
// The input schema is generated from In (see New).
func Register[In, Out any](r *Registry, d Def, h Handler[In, Out]) error {
	t, err := New(d, h)
	if err != nil {
		return fmt.Errorf("registering tool: %w", err)
	}
	return r.Add(t)
}

// MustRegister is Register for start-up code where a bad definition is a
// programming error.
func MustRegister[In, Out any](r *Registry, d Def, h Handler[In, Out]) {
	if err := Register(r, d, h); err != nil {
		panic(err)
	}
}

// Add adds a tool built with New. A second tool with the same name is an
// error wrapping ErrDuplicate: names must identify one tool for the life of
// a conversation.
func (r *Registry) Add(t *Tool) error {
	if t == nil {
		return errors.New("registering tool: tool is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[t.Name()]; ok {
		return fmt.Errorf("registering tool %q: %w", t.Name(), ErrDuplicate)
	}
	r.tools[t.Name()] = t
	return nil
}

// Get finds a tool by name.
func (r *Registry) Get(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns the tools sorted by name. The order is part of the
// contract: the stable prompt block lists tools in this order and must be
// byte-identical from turn to turn for the provider's prompt cache to hit.
func (r *Registry) List() []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	SortByName(out)
	return out
}

// SortByName sorts tools by name, the order every tool list is shown in.
func SortByName(ts []*Tool) {
	slices.SortFunc(ts, func(a, b *Tool) int { return strings.Compare(a.Name(), b.Name()) })
}
