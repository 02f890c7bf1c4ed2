package core

import "context"

// Gate decides whether an inbound message may reach an agent. Submit asks
// it before anything of the message is written, so a refused message leaves
// no entry, no conversation, no work item and no dedupe row behind. Package
// access implements it from the access: block of switchboard.yaml.
type Gate interface {
	Admit(ctx context.Context, in *Inbound) (*Admission, error)
}

// Admission is a Gate's answer.
type Admission struct {
	// Refused: the message reaches no agent and is stored nowhere.
	Refused bool
	// Notice is what to tell the person who was refused (a pairing code, a
	// polite no), or "" to say nothing: they were told already today, or
	// the message was not addressed to the bot. The platform sends it
	// itself, privately where it can (SubmitResult.Notice).
	Notice string
	// Addressed: take the message as addressed to the bot although it does
	// not mention it (a channel whose policy needs no mention).
	Addressed bool
}

// Refusal is why core refuses a message its Gate admitted.
type Refusal string

const (
	// RefusalPinnedAway: the agent that would answer is pinned away from
	// the message's workspace.
	RefusalPinnedAway Refusal = "pinned_away"
)

// Refuser is a Gate that also speaks for the refusals core makes after
// admitting a message: it says what to tell the person (Admission.Notice),
// at most once a day like its own refusals. A Gate that is not a Refuser
// leaves those messages unanswered.
type Refuser interface {
	Refuse(ctx context.Context, in *Inbound, why Refusal) (*Admission, error)
}
