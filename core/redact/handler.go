package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler is a slog.Handler that redacts every record before passing it on:
// the message, every string attribute, and errors, fmt.Stringers and other
// values by their text. It is installed on the service's logger so that no
// log line carries a secret, whichever package wrote it and whether or not
// that package remembered to redact.
type Handler struct {
	next slog.Handler
	r    *Redactor
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler wraps next. r is the Redactor to use; nil means the
// process-wide one (Default), so secrets added later with AddSecrets are
// redacted too.
func NewHandler(next slog.Handler, r *Redactor) *Handler {
	if r == nil {
		r = std
	}
	return &Handler{next: next, r: r}
}

// Enabled reports whether the wrapped handler handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle redacts the record and passes it on.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs redacts attrs once, when they are attached. A secret added with
// AddSecrets after a logger was derived with With is not removed from that
// logger's attached attributes; the program registers its secrets first.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(clean), r: h.r}
}

// WithGroup returns a Handler whose wrapped handler opens group name.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), r: h.r}
}

func (h *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]slog.Attr, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(clean...)}
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case nil:
			return slog.Attr{Key: a.Key, Value: v}
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		case []byte:
			text = string(x)
		default:
			// A struct or map may hold a secret in any field; its text
			// is what a text handler would print.
			text = fmt.Sprintf("%+v", x)
		}
		if clean := h.r.String(text); clean != text {
			return slog.String(a.Key, clean)
		}
		return slog.Attr{Key: a.Key, Value: v}
	default:
		// Numbers, booleans, times and durations hold no secret.
		return slog.Attr{Key: a.Key, Value: v}
	}
}
