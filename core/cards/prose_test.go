package cards

import (
	"testing"
)

func TestBriefingFromProse(t *testing.T) {
	r, err := BriefingFromProse("Morning briefing", "Good morning.\n\n## Weather\nSunny, **22°C**.\n\n## Calendar\n- 10:00 standup\n- 14:00 review\n\n**Inbox:**\nThree unread.")
	if err != nil {
		t.Fatal(err)
	}
	if r.Template != "briefing" || r.Title != "Morning briefing" || r.Summary != "Good morning." || len(r.Items) != 3 {
		t.Fatalf("briefing %+v, want the summary and three items", r)
	}
	for i, want := range []struct{ title, text string }{{"Weather", "Sunny, **22°C**."}, {"Calendar", "- 10:00 standup\n- 14:00 review"}, {"Inbox", "Three unread."}} {
		if it := r.Items[i]; it.Title != want.title || len(it.Sections) != 1 || it.Sections[0].Text != want.text {
			t.Errorf("item %d = %+v, want %q with %q", i, it, want.title, want.text)
		}
	}
	if _, err := Stamp(r, nil); err != nil {
		t.Fatalf("stamping the briefing: %v", err)
	}

	plain, err := BriefingFromProse("Digest", "Nothing new today.")
	if err != nil || len(plain.Items) != 1 || plain.Items[0].Title != "Digest" || plain.Items[0].Sections[0].Text != "Nothing new today." {
		t.Fatalf("prose without headings = %+v, %v; want one item titled Digest", plain, err)
	}
	if _, err := BriefingFromProse("Digest", "  \n"); err == nil {
		t.Fatal("an empty reply made a briefing, want an error")
	}
}
