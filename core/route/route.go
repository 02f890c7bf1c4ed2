// Package route decides who speaks next in a conversation with several
// agents. It is deterministic and offline: the same message, agents and
// settings always give the same order.
//
// The order, first rule that applies:
//
//  1. Addressed: agents named in the message (a platform mention of the bot
//     followed by the agent's name, the name as the first word, or "@name"
//     anywhere), in the order they are named.
//  2. One domain: the message is classified against the agents' domains
//     (keywords and description words, stemmed). When exactly one domain
//     clears the bar, or the best one beats the runner-up by the margin,
//     the best-matching specialist of that domain goes first, then the
//     generalist.
//  3. Several domains: more than one domain clears the bar and none wins by
//     the margin: the generalist goes first, then the best specialist of
//     each matched domain, best domain first.
//  4. Fallback: nothing matched: the fallback order (the channel's, else
//     its default agent), so the conversation never stalls.
package route

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	snowball "github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Role is what an agent is for.
type Role string

const (
	// Specialist answers within its domains.
	Specialist Role = "specialist"
	// Generalist takes questions across domains, and what no specialist
	// covers.
	Generalist Role = "generalist"
)

// Valid reports whether r is a known role ("" reads as generalist).
func (r Role) Valid() bool { return r == "" || r == Specialist || r == Generalist }

// Domain is an area an agent declares.
type Domain struct {
	Name        string
	Keywords    []string
	Description string
}

// Agent is what routing knows of an agent.
type Agent struct {
	Name    string
	Role    Role
	Domains []Domain
}

// Options are the classifier's settings.
type Options struct {
	// MinScore is the score a domain needs to count as matched (default 1:
	// one keyword).
	MinScore float64
	// Margin: with several matched domains, the best counts as the one
	// domain when its score is at least Margin times the runner-up's
	// (default 2).
	Margin float64
	// DescriptionWeight is what one description word counts, against 1 for
	// a keyword (default 0.5).
	DescriptionWeight float64
}

func (o *Options) defaults() {
	if o.MinScore == 0 {
		o.MinScore = 1
	}
	if o.Margin == 0 {
		o.Margin = 2
	}
	if o.DescriptionWeight == 0 {
		o.DescriptionWeight = 0.5
	}
}

func (o *Options) validate() error {
	switch {
	case o.MinScore < 0:
		return fmt.Errorf("min_score %v must not be negative", o.MinScore)
	case o.Margin < 1:
		return fmt.Errorf("margin %v must be at least 1", o.Margin)
	case o.DescriptionWeight < 0 || o.DescriptionWeight > 1:
		return fmt.Errorf("description_weight %v must be between 0 and 1", o.DescriptionWeight)
	}
	return nil
}

// Reason says which rule decided.
type Reason string

const (
	ReasonAddressed      Reason = "addressed"
	ReasonOneDomain      Reason = "one_domain"
	ReasonSeveralDomains Reason = "several_domains"
	ReasonFallback       Reason = "fallback"
)

// Score is one domain's score for a message.
type Score struct {
	Domain string
	Score  float64
}

// Decision is who speaks, in order, and why.
type Decision struct {
	Order  []string
	Reason Reason
	// Scores are the matched domains, best first (empty when addressed).
	Scores []Score
}

// term is a keyword (or description word) as stems; a keyword of several
// words matches only as a run.
type term struct {
	stems  []string
	weight float64
}

type domainTerms struct {
	name  string
	terms []term
}

type compiled struct {
	Agent
	domains []domainTerms
}

// Router routes among a fixed set of agents.
type Router struct {
	opts   Options
	agents []compiled
}

// New compiles the agents' domains. Agents are kept in the order given:
// ties go to the one declared first.
func New(agents []Agent, opts Options) (*Router, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	r := &Router{opts: opts}
	for i, a := range agents {
		if a.Name == "" {
			return nil, fmt.Errorf("agents[%d]: no name", i)
		}
		if !a.Role.Valid() {
			return nil, fmt.Errorf("agent %q: role %q must be specialist or generalist", a.Name, a.Role)
		}
		c := compiled{Agent: a}
		for j, d := range a.Domains {
			if d.Name == "" {
				return nil, fmt.Errorf("agent %q: domains[%d].name is empty", a.Name, j)
			}
			if len(d.Keywords) == 0 && strings.TrimSpace(d.Description) == "" {
				return nil, fmt.Errorf("agent %q: domains[%d] (%s) needs keywords or a description", a.Name, j, d.Name)
			}
			dt := domainTerms{name: d.Name}
			for k, kw := range d.Keywords {
				st := stems(kw, false)
				if len(st) == 0 {
					return nil, fmt.Errorf("agent %q: domains[%d].keywords[%d] %q has no word in it", a.Name, j, k, kw)
				}
				dt.terms = append(dt.terms, term{stems: st, weight: 1})
			}
			seen := map[string]bool{}
			for _, s := range stems(d.Description, true) {
				if !seen[s] && !dt.hasKeyword(s) {
					seen[s] = true
					dt.terms = append(dt.terms, term{stems: []string{s}, weight: opts.DescriptionWeight})
				}
			}
			c.domains = append(c.domains, dt)
		}
		r.agents = append(r.agents, c)
	}
	return r, nil
}

func (d *domainTerms) hasKeyword(s string) bool {
	for _, t := range d.terms {
		if len(t.stems) == 1 && t.stems[0] == s {
			return true
		}
	}
	return false
}

// stems splits text into lowercase words and stems them (English
// snowball). dropStop leaves out stop words and words under four letters,
// for descriptions, whose small words say nothing about the domain.
func stems(text string, dropStop bool) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := make([]string, 0, len(words))
	for _, w := range words {
		if dropStop && (len([]rune(w)) < 4 || stopWords[w]) {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// stem is the Snowball English (Porter2) stem of a lowercase word.
func stem(w string) string {
	env := snowball.NewEnv(w)
	english.Stem(env)
	return env.Current()
}

// stopWords is Snowball's English stop word list: words that say nothing
// about a domain.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because
		been before being below between both but by can did do does doing don down during each few for from
		further had has have having he her here hers herself him himself his how i if in into is it its itself
		just me more most my myself no nor not now of off on once only or other our ours ourselves out over own
		s same she should so some such t than that the their theirs them themselves then there these they this
		those through to too under until up very was we were what when where which while who whom why will with
		you your yours yourself yourselves`) {
		m[w] = true
	}
	return m
}()

// score counts the terms of d found in the message's stems: each term once,
// however often it occurs.
func (d *domainTerms) score(msg []string) float64 {
	var total float64
	for _, t := range d.terms {
		if containsRun(msg, t.stems) {
			total += t.weight
		}
	}
	return total
}

func containsRun(msg, run []string) bool {
	for i := 0; i+len(run) <= len(msg); i++ {
		if slices.Equal(msg[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// Scores classifies text against the domains of the candidates (nil: every
// agent): each domain's score is the best any candidate's declaration of
// it reaches. Only domains at MinScore or above are returned, best first
// (ties by name).
func (r *Router) Scores(text string, candidates []string) []Score {
	msg := stems(text, false)
	best := map[string]float64{}
	for _, a := range r.agents {
		if candidates != nil && !slices.Contains(candidates, a.Name) {
			continue
		}
		for _, d := range a.domains {
			best[d.name] = max(best[d.name], d.score(msg))
		}
	}
	var out []Score
	for name, s := range best {
		if s >= r.opts.MinScore {
			out = append(out, Score{Domain: name, Score: s})
		}
	}
	slices.SortFunc(out, func(a, b Score) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Domain, b.Domain)
	})
	return out
}

// OneDomain reports whether scores (as Scores returns them) make a
// question of one domain: a single match, or a best one at least Margin
// times the runner-up.
func (r *Router) OneDomain(scores []Score) bool {
	return len(scores) == 1 || (len(scores) > 1 && scores[0].Score >= r.opts.Margin*scores[1].Score)
}

// ErrNoCandidate is returned when there is nobody to route to: no
// candidate and no fallback.
var ErrNoCandidate = errors.New("route: no agent to answer")

// Next decides who answers text among candidates (agent names, in the
// conversation's order). Addressed agents go first whether or not they are
// candidates; fallback is the order used when nothing matches (filtered to
// nothing, the first candidate answers).
func (r *Router) Next(text string, candidates, fallback []string) (Decision, error) {
	if named := Addressed(text, r.names()); len(named) > 0 {
		return Decision{Order: named, Reason: ReasonAddressed}, nil
	}
	scores := r.Scores(text, candidates)
	switch {
	case len(scores) == 0:
	case r.OneDomain(scores):
		order := r.specialists(scores[0].Domain, text, candidates)
		order = appendNew(order, r.generalist(candidates)...)
		return Decision{Order: order, Reason: ReasonOneDomain, Scores: scores}, nil
	default:
		order := r.generalist(candidates)
		for _, s := range scores {
			if sp := r.specialists(s.Domain, text, candidates); len(sp) > 0 {
				order = appendNew(order, sp[0])
			}
		}
		return Decision{Order: order, Reason: ReasonSeveralDomains, Scores: scores}, nil
	}
	order := appendNew(nil, fallback...)
	if len(order) == 0 && len(candidates) > 0 {
		order = candidates[:1]
	}
	if len(order) == 0 {
		return Decision{Reason: ReasonFallback}, ErrNoCandidate
	}
	return Decision{Order: order, Reason: ReasonFallback}, nil
}

func (r *Router) names() []string {
	out := make([]string, len(r.agents))
	for i, a := range r.agents {
		out[i] = a.Name
	}
	return out
}

// specialists are the candidate specialists declaring domain, best match
// first (ties: declaration order).
func (r *Router) specialists(domain, text string, candidates []string) []string {
	msg := stems(text, false)
	type cand struct {
		name  string
		score float64
	}
	var cs []cand
	for _, a := range r.agents {
		if a.Role != Specialist || (candidates != nil && !slices.Contains(candidates, a.Name)) {
			continue
		}
		for _, d := range a.domains {
			if d.name == domain {
				cs = append(cs, cand{a.Name, d.score(msg)})
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// generalist is the first candidate generalist, if any.
func (r *Router) generalist(candidates []string) []string {
	for _, a := range r.agents {
		if a.Role != Specialist && (candidates == nil || slices.Contains(candidates, a.Name)) {
			return []string{a.Name}
		}
	}
	return nil
}

func appendNew(order []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(order, n) {
			order = append(order, n)
		}
	}
	return order
}

// Addressed returns the agents a message names, in the order named: the
// name as the first word ("scout, what…", "scout: …") and "@name"
// anywhere. Names match without regard to case; each agent once.
func Addressed(text string, names []string) []string {
	type hit struct {
		at   int
		name string
	}
	var hits []hit
	lower := strings.ToLower(text)
	for _, n := range names {
		ln := strings.ToLower(n)
		if first := firstWord(lower); first == ln {
			hits = append(hits, hit{strings.Index(lower, ln), n})
			continue
		}
		for i := 0; i < len(lower); {
			j := strings.Index(lower[i:], "@"+ln)
			if j < 0 {
				break
			}
			at := i + j
			end := at + 1 + len(ln)
			if end == len(lower) || !isNameRune(rune(lower[end])) {
				hits = append(hits, hit{at, n})
				break
			}
			i = end
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.at - b.at })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = appendNew(out, h.name)
	}
	return out
}

// firstWord is the message's first word when a separator (space, comma,
// colon, end) follows it; a leading "@" is part of the address.
func firstWord(text string) string {
	t := strings.TrimLeft(strings.TrimSpace(text), "@")
	end := strings.IndexFunc(t, func(r rune) bool { return !isNameRune(r) })
	if end < 0 {
		return t
	}
	return t[:end]
}

func isNameRune(r rune) bool {
	return r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
