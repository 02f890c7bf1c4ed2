package core

import (
	"bytes"
	"strconv"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// What a reply saw. A turn reads the log once, when it starts; a message
// that lands while it runs (a person writing again before the answer came)
// is not in the model's view, yet it sits before the turn's reply in the
// log. Read in seq order, that log says the reply answered it, and the
// message's own turn would end without a word. So each reply records how
// far it had read the log (AssistantContent.SeenThrough), and the turns
// after it read what it did not see after it (inSeenOrder): the message
// that came in meanwhile is answered by its own turn, after the reply that
// missed it.
//
//	log (seq):    A   B   reply(A; seen through A)
//	model view:   A   reply   B        → B's turn answers B

// advanceSeen moves t.seen, the highest seq up to which the turn has read
// every entry of the log, over its own appends es: it starts at the last
// seq the turn loaded and grows while nothing else lands between them.
// Callers hold t.mu.
func (t *turn) advanceSeen(es ...*store.Entry) {
	for _, e := range es {
		if e.Seq != nil && *e.Seq == t.seen+1 {
			t.seen++
		}
	}
}

// lastSeq is the highest seq among entries (0: none).
func lastSeq(entries []*store.Entry) int64 {
	var last int64
	for _, e := range entries {
		last = max(last, e.SeqValue())
	}
	return last
}

// inSeenOrder returns entries (in seq order) with each entry that a reply
// did not see when it was written moved to just after that reply: the
// order in which the agents learnt of them. An entry unseen by a reply is
// one after the reply's SeenThrough and before the reply, written by
// anything but the reply's own turn. A log without such gaps (the usual
// case) comes back as it is, so the prompt's prefix does not change.
func inSeenOrder(entries []*store.Entry) []*store.Entry {
	type gap struct {
		idx       int
		seen, seq int64
		turn      *uuid.UUID
	}
	var gaps []gap
	for i, e := range entries {
		if e.Kind != store.EntryAssistant || e.Seq == nil {
			continue
		}
		seen := seenThrough(e.Content)
		if seen == 0 || seen >= *e.Seq-1 {
			continue
		}
		gaps = append(gaps, gap{idx: i, seen: seen, seq: *e.Seq, turn: e.TurnID})
	}
	if len(gaps) == 0 {
		return entries
	}
	// after[j] are the entries moved to follow entries[j]; each goes after
	// the latest reply that missed it.
	after := map[int][]int{}
	moved := map[int]bool{}
	for i, e := range entries {
		s := e.SeqValue()
		for k := len(gaps) - 1; k >= 0; k-- {
			g := gaps[k]
			if s > g.seen && s < g.seq && !sameTurn(e.TurnID, g.turn) {
				after[g.idx] = append(after[g.idx], i)
				moved[i] = true
				break
			}
		}
	}
	out := make([]*store.Entry, 0, len(entries))
	var emit func(i int)
	emit = func(i int) {
		out = append(out, entries[i])
		for _, j := range after[i] {
			emit(j)
		}
	}
	for i := range entries {
		if !moved[i] {
			emit(i)
		}
	}
	return out
}

// seenKey is how AssistantContent.SeenThrough appears in an entry's JSON.
// A quote inside a JSON string is escaped, so the key with its quotes can
// only be the object's own field; nested objects (thinking, dms) have no
// such field.
var seenKey = []byte(`"seen_through":`)

// seenThrough reads AssistantContent.SeenThrough from an assistant entry's
// content (0: none) without decoding the rest: every turn reads every
// reply of its log here, and the text is most of it.
func seenThrough(content []byte) int64 {
	i := bytes.LastIndex(content, seenKey)
	if i < 0 {
		return 0
	}
	rest := bytes.TrimLeft(content[i+len(seenKey):], " \t\r\n")
	end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func sameTurn(a, b *uuid.UUID) bool {
	return a != nil && b != nil && *a == *b
}
