package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// TestFormViewOpensAndSubmits: the modal of a form with every input type
// is one Slack opens (the fake checks Slack's limits), and a submission of
// it reads back as the answers by input name.
func TestFormViewOpensAndSubmits(t *testing.T) {
	r := cardstest.FormResult()
	st, err := cards.Stamp(&r, nil)
	if err != nil {
		t.Fatal(err)
	}
	act := &st.Actions[0]
	view, err := FormView(act.Form, act.FormTitle(), formMeta{Action: "form:x:book", Channel: "C1", TS: "1.2"})
	if err != nil {
		t.Fatal(err)
	}
	srv := slacktest.NewServer(slacktest.Options{BotToken: "xoxb-t"})
	defer srv.Close()
	api := slack.New("xoxb-t", slack.OptionAPIURL(srv.APIURL()))
	if _, err := api.OpenView("trig-1", view); err != nil {
		t.Fatalf("views.open refused the form's modal: %v", err)
	}
	if _, err := api.OpenView("trig-1", view); err == nil || !strings.Contains(err.Error(), "exchanged_trigger_id") {
		t.Fatalf("a spent trigger opened a second modal: %v", err)
	}
	opened := srv.Views()[0]
	if opened.CallbackID != FormCallbackID || opened.Title != "Book a table" || opened.Submit != "Book" {
		t.Fatalf("opened %+v", opened)
	}
	var day struct {
		Element struct {
			Type        string `json:"type"`
			InitialDate string `json:"initial_date"`
		} `json:"element"`
		Optional bool `json:"optional"`
	}
	_ = json.Unmarshal(opened.Blocks[0], &day)
	if day.Element.Type != "datepicker" || day.Element.InitialDate != "2026-12-24" || day.Optional {
		t.Errorf("the day block = %s; want a required datepicker at its initial date", opened.Blocks[0])
	}

	payload := slacktest.ViewSubmission(opened, slacktest.Submitter{TeamID: "T1", UserID: "U1", UserName: "alice"}, map[string][]string{
		"day": {"2026-12-31"}, "seating": {"inside"}, "guests": {"3"}, "diet": {"vegan", "gluten_free"}, "notes": {"hi"},
	})
	var ic slack.InteractionCallback
	if err := json.Unmarshal(slacktest.MustJSON(payload), &ic); err != nil {
		t.Fatal(err)
	}
	got := formValues(&ic.View)
	want := map[string]string{"day": "2026-12-31", "seating": "inside", "guests": "3", "diet": "vegan,gluten_free", "notes": "hi"}
	for k, v := range want {
		if strings.Join(got[k], ",") != v {
			t.Errorf("answer %s = %q, want %q", k, got[k], v)
		}
	}
	answers, problems := act.Form.Parse(got)
	if len(problems) > 0 || answers["guests"] != 3.0 {
		t.Errorf("parsed %v, %v", answers, problems)
	}

	long := *act.Form
	view, _ = FormView(&long, strings.Repeat("T", 40), formMeta{Action: "form:x:book"})
	if n := len([]rune(view.Title.Text)); n > 24 {
		t.Errorf("a modal title of %d characters; Slack takes 24", n)
	}
}
