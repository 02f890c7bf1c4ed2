package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) personalityTests() []namedTest {
	return []namedTest{
		{"VersionsKept", s.testPersonalityVersions},
		{"ReplaceConflict", s.testPersonalityConflict},
		{"Invalid", s.testPersonalityInvalid},
	}
}

func newPersonalityAgent(t testing.TB, st store.Queries, name string, now time.Time) uuid.UUID {
	t.Helper()
	a, err := st.AgentUpsert(ctxFor(t), &store.AgentUpsertParams{Name: name, Config: json.RawMessage(`{}`), Now: now})
	noErr(t, err, "upserting agent %s", name)
	return a.ID
}

func (s suite) testPersonalityVersions(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	atlas := newPersonalityAgent(t, st, "atlas", clk.Now())
	scout := newPersonalityAgent(t, st, "scout", clk.Now())

	_, err := st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: atlas})
	errIs(t, err, store.ErrNotFound, "reading the personality of an agent with none")
	list, err := st.PersonalityList(ctx, &store.PersonalityListParams{AgentID: atlas})
	noErr(t, err, "listing the versions of an agent with none")
	eq(t, len(list), 0, "versions of an agent with none")

	t0 := clk.Now()
	v1, err := st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: atlas, Text: "# Atlas\nCalm.", Author: "config", Now: t0})
	noErr(t, err, "seeding the personality")
	eq(t, v1.Version, 1, "the seed's version")
	eq(t, v1.CreatedAt, t0, "the seed's created_at")
	t1 := clk.Advance(time.Hour)
	v2, err := st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: atlas, After: 1, Text: "# Atlas\nCalm and brief.", Author: "agent:atlas", Now: t1})
	noErr(t, err, "replacing the personality")
	eq(t, v2.Version, 2, "the replacement's version")
	_, err = st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: scout, Text: "# Scout", Author: "config", Now: t1})
	noErr(t, err, "seeding another agent's personality")

	cur, err := st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: atlas})
	noErr(t, err, "reading the current personality")
	eq(t, cur.Version, 2, "the current version")
	eq(t, cur.Text, "# Atlas\nCalm and brief.", "the current text")
	eq(t, cur.Author, "agent:atlas", "the current author")
	eq(t, cur.CreatedAt, t1, "the current created_at")
	old, err := st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: atlas, Version: 1})
	noErr(t, err, "reading version 1")
	eq(t, old.Text, "# Atlas\nCalm.", "version 1 stays readable")
	eq(t, old.Author, "config", "version 1's author")
	_, err = st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: atlas, Version: 3})
	errIs(t, err, store.ErrNotFound, "reading a version that does not exist")

	list, err = st.PersonalityList(ctx, &store.PersonalityListParams{AgentID: atlas})
	noErr(t, err, "listing versions")
	eq(t, len(list), 2, "atlas's versions (not scout's)")
	eq(t, list[0].Version, 2, "newest first")
	eq(t, list[1].Version, 1, "then the seed")
	list, err = st.PersonalityList(ctx, &store.PersonalityListParams{AgentID: atlas, Limit: 1})
	noErr(t, err, "listing with a limit")
	eq(t, len(list), 1, "versions within the limit")
}

func (s suite) testPersonalityConflict(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	atlas := newPersonalityAgent(t, st, "atlas", clk.Now())
	_, err := st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: atlas, Text: "seed", Author: "config", Now: clk.Now()})
	noErr(t, err, "seeding")
	// A second seed (another instance starting) finds the document there.
	_, err = st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: atlas, Text: "other seed", Author: "config", Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "seeding twice")
	_, err = st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: atlas, After: 1, Text: "first writer", Author: "operator", Now: clk.Now()})
	noErr(t, err, "replacing version 1")
	_, err = st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: atlas, After: 1, Text: "second writer", Author: "agent:atlas", Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "replacing version 1 again, after someone else did")
	cur, err := st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: atlas})
	noErr(t, err, "reading the current personality")
	eq(t, cur.Text, "first writer", "the first writer's text stays current")
}

func (s suite) testPersonalityInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	atlas := newPersonalityAgent(t, st, "atlas", newClock().Now())
	for _, p := range []store.PersonalityAppendParams{
		{Text: "x", Author: "config"},
		{AgentID: atlas, Author: "config"},
		{AgentID: atlas, Text: "x"},
		{AgentID: atlas, Text: "x", Author: "config", After: -1},
	} {
		_, err := st.PersonalityAppend(ctx, &p)
		errIs(t, err, store.ErrInvalid, "writing %+v", p)
	}
	_, err := st.PersonalityGet(ctx, &store.PersonalityGetParams{})
	errIs(t, err, store.ErrInvalid, "reading without an agent")
	_, err = st.PersonalityList(ctx, &store.PersonalityListParams{})
	errIs(t, err, store.ErrInvalid, "listing without an agent")
}
