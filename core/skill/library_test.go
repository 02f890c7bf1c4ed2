package skill_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/skill"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func mustParse(t *testing.T, md string) *skill.Skill {
	t.Helper()
	s, err := skill.Parse("test", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func md(name, desc, extra string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\nDo " + desc + ".\n"
}

// TestLibraryLayers: the platform's, an owner's and an agent's skills,
// stored, come back resolved (the agent's over the owner's over the
// platform's), another owner's stay out, the grants are those of the
// assigned skills only, and a platform sync drops what is no longer there.
// On both stores.
func TestLibraryLayers(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		ctx := context.Background()
		st := open(t)
		lib := &skill.Library{Store: st, Logger: testenv.Logger(t)}
		owner := uuid.New()
		ag, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "ada", Config: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AgentOwnerSet(ctx, &store.AgentOwnerSetParams{AgentID: ag.ID, OwnerPersonID: &owner}); err != nil {
			t.Fatal(err)
		}
		if err := lib.SyncPlatform(ctx, []*skill.Skill{
			mustParse(t, md("notes", "platform notes", "allowed-tools: [web_fetch]\n")),
			mustParse(t, md("old", "an old one", "")),
			mustParse(t, md("cal", "calendar help", "requires-tools: [calendar_*]\n")),
		}); err != nil {
			t.Fatal(err)
		}
		if err := lib.Save(ctx, skill.LayerOwner, owner.String(), mustParse(t, md("notes", "owner notes", "allowed-tools: [remind]\n"))); err != nil {
			t.Fatal(err)
		}
		if err := lib.Save(ctx, skill.LayerOwner, uuid.NewString(), mustParse(t, md("other", "someone else's", ""))); err != nil {
			t.Fatal(err)
		}
		if _, err := lib.Assign(ctx, "ada", []*skill.Skill{mustParse(t, md("old", "ada's own", "allowed-tools: [ask_user]\n"))}); err != nil {
			t.Fatal(err)
		}

		offered, err := lib.Offered(ctx, "ada", &ag.ID, tool.ContextSlack, []string{"remind"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range offered {
			got = append(got, string(s.Layer)+":"+s.Description)
		}
		if strings.Join(got, ", ") != "owner:owner notes, agent:ada's own" {
			t.Errorf("offered to ada: %v, want the owner's notes and ada's old (cal needs a calendar tool; other is another owner's)", got)
		}
		grants, err := lib.Grants(ctx, "ada", &ag.ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(grants, ",") != "load_skill,read_skill_file,remind,ask_user" {
			t.Errorf("grants: %v, want the skill tools and the assigned skills' (not the platform's web_fetch)", grants)
		}
		idx, err := lib.Index(ctx, "ada", &ag.ID, tool.ContextSlack, []string{"calendar_list"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(idx, "- cal: calendar help") {
			t.Errorf("with a calendar tool the index should offer cal:\n%s", idx)
		}

		if err := lib.SyncPlatform(ctx, []*skill.Skill{mustParse(t, md("notes", "platform notes", ""))}); err != nil {
			t.Fatal(err)
		}
		all, err := lib.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all {
			if r.Layer == store.SkillLayerPlatform && r.Name != "notes" {
				t.Errorf("platform skill %s should be gone after the sync", r.Name)
			}
		}
		if err := lib.Remove(ctx, "old", "ada"); err != nil {
			t.Errorf("removing ada's old: %v", err)
		}
	})
}
