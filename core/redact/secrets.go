package redact

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// MinSecretLen is the length below which a configured value is not
// redacted: replacing "dev" or "test" everywhere would garble ordinary
// text and still hide nothing worth hiding. Values just above it (a
// "admin1" password) are still replaced everywhere they appear, which is
// the price of never missing one.
const MinSecretLen = 5

// Redactor replaces configured secret values, then recognised secret shapes.
// Its methods are safe for concurrent use, and a nil *Redactor redacts by
// shape only.
//
// Most code calls the package functions String and Error, which use one
// process-wide Redactor: redaction happens in many packages (the engine, the
// model backends, the workers, delivery) and at all of them it must know the
// same secrets, which the program registers once at start with AddSecrets.
type Redactor struct {
	mu      sync.Mutex // serialises Add
	secrets []string   // every form of every secret, longest first
	// repl is read on every String call without taking mu.
	repl atomic.Pointer[strings.Replacer]
}

// New returns a Redactor that knows secrets (see Add).
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// std is the process-wide Redactor behind String, Error and AddSecrets.
var std = New()

// Default returns the process-wide Redactor that String and Error use.
func Default() *Redactor { return std }

// AddSecrets registers configured secret values with the process-wide
// Redactor (see Redactor.Add). Programs call it once at start, before
// anything that may fail with a secret in its message.
func AddSecrets(secrets ...string) { std.Add(secrets...) }

// Add registers secret values: from now on each is replaced by Marker
// wherever it appears, as is, URL-encoded or JSON-escaped. Surrounding
// spaces are ignored; values shorter than MinSecretLen, and values that are
// part of Marker, are skipped. Adding a value twice is harmless.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, s := range secrets {
		for _, form := range secretForms(strings.TrimSpace(s)) {
			if len(form) < MinSecretLen || strings.Contains(Marker, form) || slices.Contains(r.secrets, form) {
				continue
			}
			r.secrets = append(r.secrets, form)
			added = true
		}
	}
	if !added {
		return
	}
	// strings.Replacer tries its old strings in argument order at each
	// position: longest first, so a secret that contains another is
	// replaced whole.
	slices.SortFunc(r.secrets, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(r.secrets))
	for _, s := range r.secrets {
		pairs = append(pairs, s, Marker)
	}
	r.repl.Store(strings.NewReplacer(pairs...))
}

// secretForms is a secret as it may appear in text: as is, URL-encoded (in
// a query string or a URL's userinfo) and escaped inside a JSON string (in
// an echoed request body).
func secretForms(s string) []string {
	if s == "" {
		return nil
	}
	forms := []string{s}
	add := func(f string) {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	if b, err := json.Marshal(s); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	return forms
}

// String returns s with every secret it knows and every recognised secret
// shape replaced. Text without secrets is returned unchanged.
func (r *Redactor) String(s string) string {
	if r != nil {
		if repl := r.repl.Load(); repl != nil {
			s = repl.Replace(s)
		}
	}
	return patterns(s)
}

// Error returns err with its message redacted. The original error stays in
// the chain, so errors.Is and errors.As still find it; only the text is
// cleaned. A nil error stays nil, and an error with nothing to redact is
// returned as it is.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := r.String(msg)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}
