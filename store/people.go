package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Person is one human, whatever platforms they reach the bot from: the
// platform identities linked to them, and the display name and time zone
// last read from a platform's profile.
type Person struct {
	ID          uuid.UUID
	DisplayName string // "" until a profile or a message named them
	TimeZone    string // an IANA name; "" when unknown
	// MergedInto is set on a record that was merged into an older one (see
	// PersonMerge): the record stays, so ids kept elsewhere still resolve,
	// but its identities moved to MergedInto.
	MergedInto *uuid.UUID
	Identities []*PersonIdentity // oldest first
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Identity names a user on one platform. Workspace is the Slack team for
// Slack users, and "" where user ids are global (Discord).
type Identity struct {
	Platform  string
	Workspace string
	UserID    string
}

// PersonIdentity is an identity linked to a person.
type PersonIdentity struct {
	Identity
	PersonID uuid.UUID
	// RefreshedAt is when the identity's platform profile was last read;
	// nil when never.
	RefreshedAt *time.Time
	CreatedAt   time.Time
}

// PersonLinkCode is a one-time code that links the identity it is typed
// from to the person it was issued to. Only its hash is stored.
type PersonLinkCode struct {
	CodeHash  string
	PersonID  uuid.UUID
	Platform  string // where it was issued
	ExpiresAt time.Time
	UsedAt    *time.Time
	CreatedAt time.Time
}

// PersonCreateParams creates a person with their first identity.
type PersonCreateParams struct {
	ID          uuid.UUID // optional; a new UUID when zero
	Identity    Identity
	DisplayName string
	TimeZone    string
	Now         time.Time
}

// PersonFindParams looks a person up by one of their identities.
type PersonFindParams struct {
	Identity Identity
}

// PersonProfileParams records a profile read from Identity's platform: the
// person's display name and time zone (an empty value keeps the one
// stored) and the identity's RefreshedAt.
type PersonProfileParams struct {
	ID          uuid.UUID
	Identity    Identity
	DisplayName string
	TimeZone    string
	Now         time.Time
}

// PersonMergeParams merges Drop into Keep: Drop's identities move to Keep,
// Keep's empty display name or time zone takes Drop's, and Drop is marked
// MergedInto Keep.
type PersonMergeParams struct {
	Keep uuid.UUID
	Drop uuid.UUID
	Now  time.Time
	// DisplayName and TimeZone are what Keep shows after the merge; the
	// rules fill them in (a driver writes them as they are).
	DisplayName string
	TimeZone    string
}

// PersonLinkCodeCreateParams stores a link code's hash. It replaces the
// person's earlier codes, and forgets expired ones.
type PersonLinkCodeCreateParams struct {
	PersonID  uuid.UUID
	CodeHash  string
	Platform  string
	ExpiresAt time.Time
	Now       time.Time
}

// PersonLinkCodeUseParams spends a link code.
type PersonLinkCodeUseParams struct {
	CodeHash string
	Now      time.Time
}

// DeletedUser is the author that entries written by a forgotten person
// carry in place of theirs (see PersonForget); DeletedUserID the user id
// in their content.
const (
	DeletedUser   Author = userPrefix + DeletedUserID
	DeletedUserID        = "deleted"
	// DeletedUserName replaces their name in an entry's content.
	DeletedUserName = "deleted user"
	// RedactedText replaces the text of what they wrote, when the forget
	// deletes their messages.
	RedactedText = "[deleted]"
)

// PersonForgetParams forgets a person: the person named and every record
// of the same human (the one it was merged into, and the ones merged into
// that), on a request to delete their data.
type PersonForgetParams struct {
	PersonID uuid.UUID
	// DeleteMessages also redacts what they wrote: a message's content
	// becomes {"text": RedactedText, "redacted": true}, and the text,
	// files, page context and tool output of their other entries go.
	// Without it the content stays, with their user id and name replaced.
	DeleteMessages bool
	// By is who asked (the operator, a principal's name), for the audit.
	By  string
	Now time.Time
}

// PersonForgetResult counts what a forget changed. People is 0 when the
// person was unknown or forgotten before.
type PersonForgetResult struct {
	People      int `json:"people"`      // person records deleted (the person and those merged into it)
	Identities  int `json:"identities"`  // platform identities unlinked
	Entries     int `json:"entries"`     // entries (and discarded entries) now authored by DeletedUser
	APIKeys     int `json:"api_keys"`    // personal access tokens (their sessions go with them)
	Logins      int `json:"logins"`      // web console login links and sessions
	Connections int `json:"connections"` // GitHub and Google connections of the person
	Pairings    int `json:"pairings"`    // DM pairings of their platform identities
	Grants      int `json:"grants"`      // standing grants they made
	Notes       int `json:"notes"`       // notes of their personal workspace
	Memberships int `json:"memberships"` // workspace memberships other than ownership
}

// ForgetAuthors returns the authors a person's entries carry and the user
// ids their content and other rows name: each identity's platform user id,
// and for each person record the name the API and the console act under
// ("person:<id>").
func ForgetAuthors(personIDs []uuid.UUID, identities []Identity) (authors, userIDs []string) {
	seen := map[string]bool{}
	add := func(uid string) {
		if uid == "" || seen[uid] {
			return
		}
		seen[uid] = true
		userIDs = append(userIDs, uid)
		authors = append(authors, string(UserAuthor(uid)))
	}
	for _, id := range personIDs {
		add("person:" + id.String())
	}
	for _, i := range identities {
		add(i.UserID)
	}
	return authors, userIDs
}

// PeopleQueries are the people, their platform identities and link codes.
type PeopleQueries interface {
	// PersonCreate creates a person and links their first identity in one
	// transaction; ErrConflict when the identity is linked already (inside
	// InTx on Postgres that aborts the transaction: find first).
	PersonCreate(ctx context.Context, p *PersonCreateParams) (*Person, error)
	// PersonGet reads a person with their identities; ErrNotFound if none.
	PersonGet(ctx context.Context, id uuid.UUID) (*Person, error)
	// PersonFind reads the person an identity is linked to; ErrNotFound if
	// none.
	PersonFind(ctx context.Context, p *PersonFindParams) (*Person, error)
	// PersonSetProfile records a profile read; ErrNotFound unless the
	// identity is linked to the person.
	PersonSetProfile(ctx context.Context, p *PersonProfileParams) (*Person, error)
	// PersonMerge merges one person into another and returns the one kept;
	// ErrNotFound when either is missing, ErrConflict when Drop was merged
	// already.
	PersonMerge(ctx context.Context, p *PersonMergeParams) (*Person, error)
	// PersonLinkCodeCreate stores a code (see the params).
	PersonLinkCodeCreate(ctx context.Context, p *PersonLinkCodeCreateParams) (*PersonLinkCode, error)
	// PersonLinkCodeUse marks a code used and returns it; ErrNotFound when
	// it is unknown, used or expired at Now.
	PersonLinkCodeUse(ctx context.Context, p *PersonLinkCodeUseParams) (*PersonLinkCode, error)
	// PersonLinkCodePrune deletes codes that expired before p.Before, used
	// or not, and returns how many (Sweep calls it).
	PersonLinkCodePrune(ctx context.Context, p *PruneParams) (int, error)
	// PersonForget deletes a person's records (the one named, the one it
	// was merged into and every record merged into that), their platform
	// identities, link codes, personal access tokens, login links and
	// sessions, connections, the DM pairings and refusal notices of their
	// identities, the standing grants they made, the notes of their
	// personal workspace, their memberships other than ownership and the
	// roles single sign-on gave them (SSOGrant); it
	// removes them from conversations' participants, re-authors the
	// entries they wrote to DeletedUser (content kept, their user id and
	// name in it replaced, unless DeleteMessages redacts it) and replaces
	// them as the decider of approvals and audit rows. One transaction,
	// with an audit row (action AuditForgetPerson) that holds the counts.
	// Idempotent: forgetting again, or an unknown person, changes nothing
	// and counts zero.
	PersonForget(ctx context.Context, p *PersonForgetParams) (*PersonForgetResult, error)
}
