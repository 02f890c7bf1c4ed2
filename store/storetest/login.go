package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// ---- web sign-in ----

func (s suite) loginTests() []namedTest {
	return []namedTest{
		{"LinkUsedOnce", s.testLoginLinkOnce},
		{"ConcurrentUseOneWins", s.testLoginConcurrentUse},
		{"SessionAndPrune", s.testLoginSessionPrune},
		{"Invalid", s.testLoginInvalid},
	}
}

func (s suite) testLoginLinkOnce(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	person := uuid.New()
	expires := clk.Now().Add(10 * time.Minute)
	made, err := st.LoginCreate(ctx, &store.LoginCreateParams{
		Kind: store.LoginLink, SecretHash: hashOf("link-secret"), PersonID: &person, ExpiresAt: expires, Now: clk.Now(),
	})
	noErr(t, err, "creating a login link")
	got, err := st.LoginFind(ctx, hashOf("link-secret"))
	noErr(t, err, "finding the link by its hash")
	eq(t, got.ID, made.ID, "id")
	eq(t, got.Kind, store.LoginLink, "kind")
	uuidPtrEq(t, got.PersonID, person, "person")
	timeEq(t, got.ExpiresAt, expires, "expires at")
	isTrue(t, got.UsedAt == nil && got.Live(clk.Now()) && !got.Live(expires), "live before its expiry, not at it")

	used, err := st.LoginUse(ctx, &store.LoginUseParams{SecretHash: hashOf("link-secret"), Now: clk.Advance(time.Minute)})
	noErr(t, err, "using the link")
	timePtrEq(t, used.UsedAt, clk.Now(), "used at")
	_, err = st.LoginUse(ctx, &store.LoginUseParams{SecretHash: hashOf("link-secret"), Now: clk.Advance(time.Minute)})
	errIs(t, err, store.ErrConflict, "using the link a second time")
	_, err = st.LoginUse(ctx, &store.LoginUseParams{SecretHash: hashOf("nobody"), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "using an unknown link")
	_, err = st.LoginFind(ctx, hashOf("nobody"))
	errIs(t, err, store.ErrNotFound, "finding an unknown hash")
	_, err = st.LoginCreate(ctx, &store.LoginCreateParams{
		Kind: store.LoginSession, SecretHash: hashOf("link-secret"), ExpiresAt: expires, Now: clk.Now(),
	})
	errIs(t, err, store.ErrConflict, "creating a second row with the same hash")
}

func (s suite) testLoginConcurrentUse(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	person := uuid.New()
	_, err := st.LoginCreate(ctx, &store.LoginCreateParams{
		Kind: store.LoginLink, SecretHash: hashOf("race"), PersonID: &person, ExpiresAt: clk.Now().Add(time.Hour), Now: clk.Now(),
	})
	noErr(t, err, "creating a login link")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = st.LoginUse(ctx, &store.LoginUseParams{SecretHash: hashOf("race"), Now: clk.Now()})
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		errIs(t, err, store.ErrConflict, "a losing concurrent use")
	}
	eq(t, ok, 1, "concurrent uses that succeeded")
}

func (s suite) testLoginSessionPrune(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	// An operator session names no person.
	op, err := st.LoginCreate(ctx, &store.LoginCreateParams{
		Kind: store.LoginSession, SecretHash: hashOf("op"), ExpiresAt: clk.Now().Add(time.Hour), Now: clk.Now(),
	})
	noErr(t, err, "creating an operator session")
	isTrue(t, op.PersonID == nil, "an operator session has no person")
	_, err = st.LoginCreate(ctx, &store.LoginCreateParams{
		Kind: store.LoginSession, SecretHash: hashOf("long"), ExpiresAt: clk.Now().Add(48 * time.Hour), Now: clk.Now(),
	})
	noErr(t, err, "creating a long session")
	n, err := st.LoginPrune(ctx, &store.PruneParams{Before: clk.Now().Add(2 * time.Hour)})
	noErr(t, err, "pruning")
	eq(t, n, 1, "rows pruned")
	_, err = st.LoginFind(ctx, hashOf("op"))
	errIs(t, err, store.ErrNotFound, "finding the pruned session")
	_, err = st.LoginFind(ctx, hashOf("long"))
	noErr(t, err, "finding the session that has not expired")
}

func (s suite) testLoginInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	for _, tc := range []struct {
		name string
		p    store.LoginCreateParams
	}{
		{"unknown kind", store.LoginCreateParams{Kind: "magic", SecretHash: hashOf("a"), ExpiresAt: clk.Now()}},
		{"short hash", store.LoginCreateParams{Kind: store.LoginSession, SecretHash: []byte("x"), ExpiresAt: clk.Now()}},
		{"a link without a person", store.LoginCreateParams{Kind: store.LoginLink, SecretHash: hashOf("b"), ExpiresAt: clk.Now()}},
		{"no expiry", store.LoginCreateParams{Kind: store.LoginSession, SecretHash: hashOf("c")}},
	} {
		_, err := st.LoginCreate(ctx, &tc.p)
		errIs(t, err, store.ErrInvalid, "creating a login with %s", tc.name)
	}
}
