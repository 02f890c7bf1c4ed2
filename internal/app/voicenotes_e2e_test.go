package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/voicenotetest"
	"github.com/switchboardhq/switchboard/store"
)

// voicePhrase is what the voice notes of these tests say.
const voicePhrase = "remind me to water the plants at five"

// quoted is the line a reply to a voice note opens with.
func quoted(transcript string) string { return "> 🎙️ “" + transcript + "”\n\n" }

// voiceConfig is an agent that hears voice notes with transcribe and,
// with speak set, answers them with its voice too.
func voiceConfig(transcribe, speak string) string {
	c := openAccess + "slack:\n  ack: deferred\nagents:\n  - name: atlas\n    answers:\n      default: true\n      channels: [\"" + voiceChannel + "\"]\n" +
		"    voice:\n      transcribe: " + transcribe + "\n"
	if speak != "" {
		c += "      speak: " + speak + "\n      reply_with_voice: true\n"
	}
	return c
}

// voiceChannel is the Discord channel the agent answers every message in
// (a voice message mentions no one).
const voiceChannel = "3000000000000000077"

// voiceEnv is the service on Slack and Discord together, a fake model and
// a fake OpenAI transcription server.
type voiceEnv struct {
	*slackEnv
	discord *discordtest.Server
	model   *modeltest.Fake
	audio   *modeltest.AudioFake
}

func startVoice(t *testing.T, db string, config string) *voiceEnv {
	t.Helper()
	model := modeltest.NewAnthropic(t)
	audio := modeltest.NewOpenAIAudio(t)
	audio.SetText(voicePhrase)
	env := anthropicEnv(model)
	env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = audio.URL, "sk-voice-test"
	dc := discordtest.NewServer(t)
	e := startSlack(t, db, envOptions{env: env, config: config, discord: dc})
	return &voiceEnv{slackEnv: e, discord: dc, model: model, audio: audio}
}

// slackClip sends alice's audio clip in a DM, as Slack sends it.
func (e *voiceEnv) slackClip(eventID, dm, ts string, file []byte, mime string) {
	_, ext, _ := strings.Cut(mime, "/")
	clip := e.slack.ShareAudioClip("audio_message."+ext, mime, file, 2500)
	e.mustPost(newEvent(eventID, fileShare(dm, ts, alice, "", clip)))
}

// spokenEntry checks the conversation's log holds the note once, as a
// message from alice whose text is the transcript, the recording kept.
func (e *voiceEnv) spokenEntry(t *testing.T, conv *store.Conversation, transcript string) {
	t.Helper()
	users := e.entries(conv.ID, store.EntryUser)
	if len(users) != 1 {
		t.Fatalf("%d messages of alice's in the log; want the voice note once", len(users))
	}
	c := decode[core.UserContent](t, users[0])
	if !strings.Contains(c.Text, transcript) {
		t.Fatalf("the logged message reads %q; want the transcript %q", c.Text, transcript)
	}
	kept := false
	for _, f := range c.Files {
		kept = kept || (len(f.Data) > 0 && strings.HasPrefix(f.MimeType, "audio/"))
	}
	if c.Spoken == nil || !kept {
		t.Fatalf("the logged message: spoken %+v, files %+v; want it marked spoken, the recording kept", c.Spoken, c.Files)
	}
	// The transcription is accounted for once, however often the event
	// came.
	usage, err := e.store.UsageList(context.Background(), conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	heard := 0
	for _, u := range usage {
		if u.Kind == store.UsageTranscription {
			heard++
			if u.AudioMs <= 0 {
				t.Fatalf("the transcription's usage has %d ms of audio; want the note's length", u.AudioMs)
			}
		}
	}
	if heard != 1 {
		t.Fatalf("%d transcription usage rows in the conversation; want 1", heard)
	}
}

// TestVoiceNotesAreAnsweredOnce: a Slack audio clip (WebM; MP4 as a phone
// records it, once labelled video/mp4 as Slack sometimes does) and a Discord voice message (Ogg Opus), made at test
// time from espeak-ng's speech, are each transcribed (an OpenAI-compatible
// server) and answered once, the transcript quoted above the reply; the
// model hears the transcript as the person's words; a redelivered event
// is answered no second time. A clip in a message mentioning the bot in a
// channel is answered in its thread.
func TestVoiceNotesAreAnsweredOnce(t *testing.T) {
	t.Parallel()
	wav := voicenotetest.WAV(t, voicePhrase)
	webm, mp4, ogg := voicenotetest.Encode(t, wav, "webm"), voicenotetest.Encode(t, wav, "mp4"), voicenotetest.Encode(t, wav, "ogg")
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startVoice(t, db(t), voiceConfig("openai:whisper-1", ""))
		e.model.Default(modeltest.Reply{Text: "I will remind you at 17:00."})
		want := quoted(voicePhrase) + "I will remind you at 17:00."

		for i, clip := range []struct {
			file []byte
			mime string
		}{{webm, "audio/webm"}, {mp4, "audio/mp4"}, {mp4, "video/mp4"}} {
			dm, ts := fmt.Sprintf("D0CLIP%d", i), fmt.Sprintf("1700000700.%06d", i)
			e.slackClip(fmt.Sprintf("EvClip%d", i), dm, ts, clip.file, clip.mime)
			e.waitReply(dm, "17:00")
			e.waitIdle()
			// Slack delivers the event again (its ack was slow): nothing new.
			_, ext, _ := strings.Cut(clip.mime, "/")
			again := e.slack.ShareAudioClip("audio_message."+ext, clip.mime, clip.file, 2500)
			retry := newEvent(fmt.Sprintf("EvClip%d", i), fileShare(dm, ts, alice, "", again))
			retry.header = map[string][]string{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}}
			e.mustPost(retry)
			e.waitIdle()
			msgs := e.botMessages(dm)
			if len(msgs) != 1 || shown(msgs[0]) != want {
				var got []string
				for _, m := range msgs {
					got = append(got, shown(m))
				}
				t.Fatalf("slack %s clip: the bot's messages %q; want one, %q", clip.mime, got, want)
			}
			e.spokenEntry(t, e.conversation(dm, ""), voicePhrase)
		}

		// A clip in a message mentioning the bot, in a channel: answered
		// in the thread it starts.
		const ch, ts = "C0VOICE", "1700000750.000100"
		ev := mention(ch, ts, "", alice, "")
		ev["files"] = []any{e.slack.ShareAudioClip("audio_message.webm", "audio/webm", webm, 2500)}
		e.mustPost(newEvent("EvClipMention", ev))
		e.waitReply(ch, "17:00")
		e.waitIdle()
		if msgs := e.botMessages(ch); len(msgs) != 1 || msgs[0].ThreadTS != ts || shown(msgs[0]) != want {
			t.Fatalf("slack mention with a clip: the bot's messages %+v; want one in the thread, %q", msgs, want)
		}
		e.spokenEntry(t, e.conversation(ch, ts), voicePhrase)

		e.discord.UserVoiceMessage(voiceChannel, discordgo.User{ID: "2000000000000000001", Username: "alice"}, ogg, 2.6, []byte{3, 90, 140, 30})
		e.discord.Wait(t, "the reply to the voice message", func() bool {
			for _, m := range e.discord.BotMessages(voiceChannel) {
				if m.Content == want {
					return true
				}
			}
			return false
		})
		e.waitIdle()
		if msgs := e.discord.BotMessages(voiceChannel); len(msgs) != 1 {
			t.Fatalf("discord: %d bot messages; want the one reply", len(msgs))
		}
		b, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("discord", discordtest.DefaultGuildID, voiceChannel, "")})
		if err != nil {
			t.Fatalf("the voice message's conversation: %v", err)
		}
		conv, err := e.store.ConversationGet(context.Background(), b.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		e.spokenEntry(t, conv, voicePhrase)

		// Five notes, five transcriptions (each once, with the file in
		// the form the API takes) and five model calls that heard them.
		reqs := e.audio.Requests()
		if len(reqs) != 5 {
			t.Fatalf("%d transcription requests; want 5, one per note", len(reqs))
		}
		for i, r := range reqs {
			if r.Model != "whisper-1" || len(r.File) == 0 {
				t.Fatalf("transcription %d: model %q, %d bytes; want whisper-1 and the recording", i, r.Model, len(r.File))
			}
		}
		calls := e.model.Requests()
		if len(calls) != 5 {
			t.Fatalf("%d model calls; want 5", len(calls))
		}
		for i, c := range calls {
			if _, text := lastUserMedia(t, c); !strings.Contains(text, voicePhrase) {
				t.Fatalf("model call %d: the person's message %q; want the transcript", i, text)
			}
		}
	})
}

// TestVoiceNoteOffline: with the offline engine (pocketsphinx), the
// transcript quoted above the reply is exactly what the engine hears in
// the same recording on its own.
func TestVoiceNoteOffline(t *testing.T) {
	t.Parallel()
	voicenotetest.Need(t, "pocketsphinx_continuous", "espeak-ng", "ffmpeg")
	ogg := voicenotetest.Encode(t, voicenotetest.WAV(t, voicePhrase), "ogg")
	eng, err := voice.NewOffline(voice.OfflineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := eng.Transcribe(context.Background(), voice.Recording{Name: "voice-message.ogg", MimeType: "audio/ogg", Data: ogg})
	if err != nil || strings.TrimSpace(alone.Text) == "" {
		t.Fatalf("pocketsphinx alone heard %q (%v); want some words", alone.Text, err)
	}
	e := startVoice(t, sqliteDatabase(t), voiceConfig("offline", ""))
	e.model.Default(modeltest.Reply{Text: "Heard you."})
	e.discord.UserVoiceMessage(voiceChannel, discordgo.User{ID: "2000000000000000001", Username: "alice"}, ogg, 2.6, []byte{3, 90})
	want := quoted(alone.Text) + "Heard you."
	e.discord.Wait(t, "the reply quoting what pocketsphinx heard", func() bool {
		for _, m := range e.discord.BotMessages(voiceChannel) {
			if m.Content == want {
				return true
			}
		}
		return false
	})
	if n := len(e.audio.Requests()); n != 0 {
		t.Fatalf("%d requests to the OpenAI fake; want none (offline)", n)
	}
}

// TestVoiceNoteReplyWithVoice: an agent with reply_with_voice answers a
// voice note with its text and a voice message: on Discord a voice
// message as documented (the fake refuses anything else), on Slack an
// audio file in the thread.
func TestVoiceNoteReplyWithVoice(t *testing.T) {
	t.Parallel()
	voicenotetest.Need(t, "espeak-ng", "ffmpeg")
	wav := voicenotetest.WAV(t, voicePhrase)
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startVoice(t, db(t), voiceConfig("openai:whisper-1", "offline"))
		e.model.Default(modeltest.Reply{Text: "Plants at five, noted."})

		e.discord.UserVoiceMessage(voiceChannel, discordgo.User{ID: "2000000000000000001", Username: "alice"}, voicenotetest.Encode(t, wav, "ogg"), 2.6, []byte{3, 90})
		var spoken *discordtest.Message
		e.discord.Wait(t, "a voice message answering the voice message", func() bool {
			for _, m := range e.discord.BotMessages(voiceChannel) {
				if m.VoiceMessage() {
					spoken = m
					return true
				}
			}
			return false
		})
		e.waitIdle()
		msgs := e.discord.BotMessages(voiceChannel)
		if len(msgs) != 2 || msgs[0].Content != quoted(voicePhrase)+"Plants at five, noted." {
			t.Fatalf("discord: %d bot messages; want the text reply, then the voice message", len(msgs))
		}
		att := spoken.Attachments[0]
		wave, err := base64.StdEncoding.DecodeString(att.Waveform)
		if len(spoken.Attachments) != 1 || att.DurationSecs <= 0.5 || err != nil || len(wave) == 0 || len(wave) > 256 || !bytes.HasPrefix(att.Data, []byte("OggS")) {
			t.Fatalf("the voice message's attachment: %s, %v s, waveform %d points (%v); want Ogg Opus of the reply with its waveform", att.Filename, att.DurationSecs, len(wave), err)
		}
		// The reply spoken lasts about as long as espeak-ng takes to say it.
		back := voicenotetest.PCM(t, att.Data)
		if d := back.Format.Duration(len(back.PCM)).Seconds(); d < 1 || d > 10 || d-att.DurationSecs > 0.2 || att.DurationSecs-d > 0.2 {
			t.Fatalf("the voice message lasts %.2fs and says %.2fs; want the reply spoken, and its true length", d, att.DurationSecs)
		}

		// The speech is accounted for: the characters said, the audio made.
		b, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("discord", discordtest.DefaultGuildID, voiceChannel, "")})
		if err != nil {
			t.Fatal(err)
		}
		usage, err := e.store.UsageList(context.Background(), b.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		said := 0
		for _, u := range usage {
			if u.Kind == store.UsageSpeech && u.SpeechChars > 0 && u.AudioMs > 0 {
				said++
			}
		}
		if said != 1 {
			t.Fatalf("%d speech usage rows; want the one spoken reply", said)
		}

		const dm = "D0SPOKEN"
		e.slackClip("EvSpoken", dm, "1700000800.000100", voicenotetest.Encode(t, wav, "webm"), "audio/webm")
		e.waitReply(dm, "noted")
		e.waitIdle()
		var files []string
		for _, f := range e.slack.Files() {
			if f.Channel == dm {
				files = append(files, f.Name)
				if !bytes.HasPrefix(f.Data, []byte{0x1a, 0x45, 0xdf, 0xa3}) {
					t.Fatalf("the spoken reply uploaded to slack starts % x; want WebM", f.Data[:8])
				}
			}
		}
		if len(files) != 1 || !strings.HasSuffix(files[0], ".webm") {
			t.Fatalf("files shared in the DM %q; want the spoken reply once", files)
		}
	})
}

// TestVoiceNoteWithVoiceOff: an agent that does not transcribe still
// answers a clip: it is told a voice note came that it cannot hear, the
// log keeps the note's name and the reason, not its audio, and nothing is
// quoted or transcribed.
func TestVoiceNoteWithVoiceOff(t *testing.T) {
	t.Parallel()
	webm := voicenotetest.Encode(t, voicenotetest.WAV(t, voicePhrase), "webm")
	e := startVoice(t, sqliteDatabase(t), openAccess+"slack:\n  ack: deferred\n")
	e.model.Default(modeltest.Reply{Text: "I cannot listen to voice notes yet."})
	const dm = "D0DEAF"
	e.slackClip("EvDeaf", dm, "1700000900.000100", webm, "audio/webm")
	reply := e.waitReply(dm, "cannot listen")
	e.waitIdle()
	if shown(reply) != "I cannot listen to voice notes yet." {
		t.Fatalf("the reply shows %q; want the agent's words alone, no transcript", shown(reply))
	}
	if n := len(e.audio.Requests()); n != 0 {
		t.Fatalf("%d transcription requests; want none", n)
	}
	calls := e.model.Requests()
	if len(calls) != 1 {
		t.Fatalf("%d model calls; want 1", len(calls))
	}
	if _, text := lastUserMedia(t, calls[0]); !strings.Contains(text, "voice.transcribe is off") {
		t.Fatalf("the model was told %q; want the note named with the reason it was not heard", text)
	}
	c := decode[core.UserContent](t, e.entries(e.conversation(dm, "").ID, store.EntryUser)[0])
	if c.Spoken != nil || len(c.Files) != 1 || len(c.Files[0].Data) != 0 || c.Files[0].Note == "" {
		t.Fatalf("the logged message %+v; want the note by name with its reason, not spoken, no audio", c)
	}
}
