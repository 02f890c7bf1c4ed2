package route

import (
	"slices"
	"testing"
)

func team(t *testing.T) *Router {
	t.Helper()
	r, err := New([]Agent{
		{Name: "atlas", Role: Generalist},
		{Name: "ledger", Role: Specialist, Domains: []Domain{{
			Name: "billing", Keywords: []string{"invoice", "refund", "payment", "credit card"},
			Description: "Billing questions: subscriptions and charges.",
		}}},
		{Name: "forge", Role: Specialist, Domains: []Domain{{
			Name: "infra", Keywords: []string{"deploy", "server", "database", "outage"},
		}}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNext(t *testing.T) {
	r := team(t)
	all := []string{"atlas", "ledger", "forge"}
	tests := []struct {
		name     string
		text     string
		fallback []string
		order    []string
		reason   Reason
	}{
		{"name first", "forge, is the build green?", nil, []string{"forge"}, ReasonAddressed},
		{"at names in order", "can @ledger check this, then @atlas sum up", nil, []string{"ledger", "atlas"}, ReasonAddressed},
		{"name first wins over domains", "ledger: the deploy failed", nil, []string{"ledger"}, ReasonAddressed},
		{"at needs a word boundary", "mail @ledgerbot about invoices", nil, []string{"ledger", "atlas"}, ReasonOneDomain},
		{"one domain, stemmed", "Why was I refunded twice on my invoices?", nil, []string{"ledger", "atlas"}, ReasonOneDomain},
		{"multi-word keyword", "my credit card was declined", nil, []string{"ledger", "atlas"}, ReasonOneDomain},
		{"description word counts half", "a question about my subscription charges", nil, []string{"ledger", "atlas"}, ReasonOneDomain},
		{"clear winner by margin", "the refund invoice payment failed after the deploy", nil, []string{"ledger", "atlas"}, ReasonOneDomain},
		// A tie: several domains; specialists follow by domain name.
		{"several domains", "the deploy broke the invoice page", nil, []string{"atlas", "ledger", "forge"}, ReasonSeveralDomains},
		{"nothing: fallback", "what a lovely day", []string{"forge"}, []string{"forge"}, ReasonFallback},
		{"nothing, no fallback: first candidate", "what a lovely day", nil, []string{"atlas"}, ReasonFallback},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := r.Next(tc.text, all, tc.fallback)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Order, tc.order) || d.Reason != tc.reason {
				t.Errorf("Next(%q) = %v (%s, scores %v), want %v (%s)", tc.text, d.Order, d.Reason, d.Scores, tc.order, tc.reason)
			}
		})
	}
}

func TestNextOnlyAmongCandidates(t *testing.T) {
	r := team(t)
	d, err := r.Next("the deploy broke the invoice page", []string{"atlas", "forge"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// ledger is not in the conversation: only infra is a domain here.
	if want := []string{"forge", "atlas"}; !slices.Equal(d.Order, want) || d.Reason != ReasonOneDomain {
		t.Errorf("order %v (%s), want %v one_domain", d.Order, d.Reason, want)
	}
	if _, err := r.Next("hello", []string{}, nil); err != ErrNoCandidate {
		t.Errorf("no candidates and no fallback: err %v, want ErrNoCandidate", err)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent Agent
	}{
		{"role", Agent{Name: "a", Role: "boss"}},
		{"domain name", Agent{Name: "a", Domains: []Domain{{Keywords: []string{"x"}}}}},
		{"empty domain", Agent{Name: "a", Domains: []Domain{{Name: "d"}}}},
		{"punctuation keyword", Agent{Name: "a", Domains: []Domain{{Name: "d", Keywords: []string{"--"}}}}},
	} {
		if _, err := New([]Agent{tc.agent}, Options{}); err == nil {
			t.Errorf("%s: New accepted %+v", tc.name, tc.agent)
		}
	}
	if _, err := New(nil, Options{Margin: 0.5}); err == nil {
		t.Error("New accepted a margin under 1")
	}
}
