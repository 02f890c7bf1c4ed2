package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

const artifactSource = "package main\n\nfunc main() {}\n"

// An artifact the agent makes in a Slack thread is shared there once, as a
// file with a link to its page in the same call, even when sharing it
// failed first and the delivery was tried again.
func TestArtifactPostedToSlackAsAFileOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		env := anthropicEnv(fake)
		env["SWITCHBOARD_PUBLIC_URL"] = "https://sb.example.com"
		e := startSlack(t, db(t), envOptions{env: env})
		input, _ := json.Marshal(map[string]string{"kind": "code", "title": "main.go", "language": "go", "content": artifactSource})
		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_art", Name: "artifact_create", Input: string(input)}}},
			modeltest.Reply{Text: "Here is the program."},
		)
		// The first share is refused: the delivery of the file fails and is
		// tried again.
		e.slack.Fail("files.completeUploadExternal", slacktest.Fault{Error: "internal_error"})
		const ch, ts = "C0ART", "1700009000.000001"
		e.mustPost(newEvent("EvArt1", mention(ch, ts, "", alice, "write me a program")))
		e.waitReply(ch, "Here is the program.")
		e.waitIdle()

		arts, err := e.store.ArtifactList(t.Context(), &store.ArtifactListParams{Visibility: store.Visibility{All: true}})
		if err != nil || len(arts) != 1 {
			t.Fatalf("artifacts = %+v, %v; want the one made", arts, err)
		}
		var shared []slacktest.File
		for _, f := range e.slack.Files() {
			if f.Channel != "" {
				shared = append(shared, f)
			}
		}
		if len(shared) != 1 {
			t.Fatalf("%d files shared (%+v); want exactly one", len(shared), shared)
		}
		f := shared[0]
		link := "artifact=" + arts[0].ID.String()
		if f.Name != "main.go" || string(f.Data) != artifactSource || f.Channel != ch || f.ThreadTS != ts || !strings.Contains(f.InitialComment, "https://sb.example.com/?view=artifacts") || !strings.Contains(f.InitialComment, link) {
			t.Fatalf("the shared file = %+v; want main.go with the source, in the thread, with the link %s", f, link)
		}
		if n := len(e.slack.Calls("files.completeUploadExternal")); n != 2 {
			t.Fatalf("files.completeUploadExternal was called %d times; want 2 (the refused one and the retry)", n)
		}
	})
}

// On Discord the artifact is an attachment of one message, with its
// caption, even when the post was rate limited first.
func TestArtifactPostedToDiscordAsAnAttachmentOnce(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		script := map[string]any{"turns": []map[string]any{
			{"after_tool": "artifact_create", "text": "Here is the program."},
			{"when_last_user_contains": "write me a program", "tool_calls": []map[string]any{{
				"name": "artifact_create", "input": map[string]any{"kind": "code", "title": "main.go", "language": "go", "content": artifactSource},
			}}},
		}}
		raw, _ := json.Marshal(script)
		path := filepath.Join(t.TempDir(), "script.yaml")
		if err := os.WriteFile(path, raw, 0o600); err != nil { // JSON is YAML
			t.Fatal(err)
		}
		e := discordStartScript(t, db, path, openAccess, nil)
		const channel = "3000000000000000077"
		e.fake.RateLimit(discordRoutePost, 50*time.Millisecond, false)
		e.mention(channel, discordAlice, "write me a program")
		e.waitBotMessage(channel, "Here is the program.")
		e.settle(channel)

		var withFile int
		for _, m := range e.fake.BotMessages(channel) {
			if len(m.Attachments) == 0 {
				continue
			}
			withFile++
			a := m.Attachments[0]
			if a.Filename != "main.go" || string(a.Data) != artifactSource || !strings.Contains(m.Content, "main.go") || !strings.Contains(m.Content, "version 1") {
				t.Fatalf("the message with the file: content %q, attachment %s %q", m.Content, a.Filename, a.Data)
			}
		}
		if withFile != 1 {
			t.Fatalf("%d messages carry a file; want exactly one", withFile)
		}
	})
}
