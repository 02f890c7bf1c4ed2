package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// ---- skills ----

func (s suite) skillTests() []namedTest {
	return []namedTest{
		{"SaveGetReplace", s.testSkillSaveGetReplace},
		{"ListLayers", s.testSkillListLayers},
		{"Refused", s.testSkillRefused},
	}
}

func (s suite) testSkillSaveGetReplace(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	key := store.SkillKey{Layer: store.SkillLayerAgent, Scope: "ada", Name: "notes"}
	_, err := st.SkillGet(ctx, key)
	errIs(t, err, store.ErrNotFound, "reading a skill never saved")

	first := clk.Now()
	files := map[string][]byte{"templates/a.md": []byte("# A"), "bin/x": {0, 1, 2, 255}}
	got, err := st.SkillSave(ctx, &store.SkillSaveParams{
		Layer: key.Layer, Scope: key.Scope, Name: key.Name, Description: "Take notes.",
		FrontMatter: "name: notes\ndescription: Take notes.", Instructions: "Step 1.", Files: files, Now: first,
	})
	noErr(t, err, "saving the skill")
	want := store.Skill{
		Layer: key.Layer, Scope: key.Scope, Name: key.Name, Description: "Take notes.",
		FrontMatter: "name: notes\ndescription: Take notes.", Instructions: "Step 1.", Files: files,
		CreatedAt: first, UpdatedAt: first,
	}
	deepEq(t, *got, want, "the saved skill")
	read, err := st.SkillGet(ctx, key)
	noErr(t, err, "reading the skill")
	deepEq(t, *read, want, "the skill read back, binary file included")

	later := clk.Advance(time.Hour)
	got, err = st.SkillSave(ctx, &store.SkillSaveParams{
		Layer: key.Layer, Scope: key.Scope, Name: key.Name, Description: "Take better notes.", Instructions: "Step 2.", Now: later,
	})
	noErr(t, err, "replacing the skill")
	eq(t, got.Instructions, "Step 2.", "instructions after a replace")
	eq(t, len(got.Files), 0, "files after a replace without files")
	timeEq(t, got.CreatedAt, first, "CreatedAt after a replace")
	timeEq(t, got.UpdatedAt, later, "UpdatedAt after a replace")

	noErr(t, st.SkillDelete(ctx, key), "removing the skill")
	errIs(t, st.SkillDelete(ctx, key), store.ErrNotFound, "removing it again")
	_, err = st.SkillGet(ctx, key)
	errIs(t, err, store.ErrNotFound, "reading a removed skill")
}

func (s suite) testSkillListLayers(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	for _, k := range []store.SkillKey{
		{Layer: store.SkillLayerPlatform, Name: "notes"},
		{Layer: store.SkillLayerOwner, Scope: "alice", Name: "notes"},
		{Layer: store.SkillLayerOwner, Scope: "bob", Name: "notes"},
		{Layer: store.SkillLayerAgent, Scope: "ada", Name: "notes"},
		{Layer: store.SkillLayerAgent, Scope: "bea", Name: "cal"},
	} {
		_, err := st.SkillSave(ctx, &store.SkillSaveParams{Layer: k.Layer, Scope: k.Scope, Name: k.Name, Description: "d", Instructions: "i"})
		noErr(t, err, "saving %v", k)
	}
	names := func(p *store.SkillListParams) string {
		t.Helper()
		got, err := st.SkillList(ctx, p)
		noErr(t, err, "listing %+v", p)
		var out []string
		for _, s := range got {
			out = append(out, s.Layer+":"+s.Scope+":"+s.Name)
		}
		return strings.Join(out, " ")
	}
	eq(t, names(&store.SkillListParams{Owner: "alice", Agent: "ada"}), "agent:ada:notes owner:alice:notes platform::notes",
		"the skills offered to ada of alice: hers, her owner's and the platform's")
	eq(t, names(&store.SkillListParams{}), "platform::notes", "with no owner or agent: the platform's only")
	eq(t, names(&store.SkillListParams{Agent: "bea"}), "agent:bea:cal platform::notes", "bea without an owner")
	eq(t, names(&store.SkillListParams{All: true}),
		"agent:ada:notes agent:bea:cal owner:alice:notes owner:bob:notes platform::notes", "every skill")
}

func (s suite) testSkillRefused(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	for name, p := range map[string]store.SkillSaveParams{
		"unknown layer":             {Layer: "team", Scope: "x", Name: "a", Description: "d", Instructions: "i"},
		"platform with a scope":     {Layer: store.SkillLayerPlatform, Scope: "x", Name: "a", Description: "d", Instructions: "i"},
		"agent without a scope":     {Layer: store.SkillLayerAgent, Name: "a", Description: "d", Instructions: "i"},
		"no description":            {Layer: store.SkillLayerPlatform, Name: "a", Instructions: "i"},
		"file escaping":             {Layer: store.SkillLayerPlatform, Name: "a", Description: "d", Instructions: "i", Files: map[string][]byte{"../x": nil}},
		"absolute file":             {Layer: store.SkillLayerPlatform, Name: "a", Description: "d", Instructions: "i", Files: map[string][]byte{"/etc/x": nil}},
		"larger than MaxSkillBytes": {Layer: store.SkillLayerPlatform, Name: "a", Description: "d", Instructions: "i", Files: map[string][]byte{"big": make([]byte, store.MaxSkillBytes)}},
	} {
		_, err := st.SkillSave(ctx, &p)
		errIs(t, err, store.ErrInvalid, "saving a skill with %s", name)
	}
	got, err := st.SkillList(ctx, &store.SkillListParams{All: true})
	noErr(t, err, "listing")
	eq(t, len(got), 0, "skills stored after every save was refused")
}
