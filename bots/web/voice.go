package web

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/core/voice/live"
)

// Live voice: GET /api/conversations/{id}/voice is a WebSocket on which the
// console's page sends the person's microphone and hears the agent (see
// docs/voice-console.md for the protocol). The session itself is
// core/voice/live's; this file moves its bytes and control messages.

// Voice is what live voice needs of core; *core.Service implements it.
type Voice interface {
	// VoiceFor is an agent's voice engines (ErrVoiceOff when it has
	// none).
	VoiceFor(agent string) (*core.VoiceEngines, *config.Agent, error)
	Listen(ctx context.Context, agent, person string, f voice.Format) (*core.Listening, error)
	PostSpoken(ctx context.Context, conv uuid.UUID, userID string, h *core.Heard, o core.MessageOptions) (int64, error)
	SpeakReply(ctx context.Context, o core.ReplySpeechOptions) (*core.ReplySpeech, error)
}

// VoiceStart is the first message the page sends on the voice socket.
type VoiceStart struct {
	Type string `json:"type"` // "start"
	// Mode is "voice" (the server hears where speech starts and ends; the
	// default) or "push_to_talk" (the page sends ptt down and up).
	Mode string `json:"mode,omitempty"`
	// Wake, when set, is the phrase an utterance must begin with to be
	// sent (the agent's name, or another phrase); others are ignored.
	Wake string `json:"wake,omitempty"`
	// WakeName, with no Wake, makes the agent's name the wake phrase.
	WakeName bool `json:"wake_name,omitempty"`
	// SampleRate must be 16000: the page sends 16-bit mono PCM at 16 kHz.
	SampleRate int `json:"sample_rate,omitempty"`
	// Context is what the person is looking at, as a message's context.
	Context string `json:"context,omitempty"`
}

// voiceControl is a later control message from the page.
type voiceControl struct {
	Type string `json:"type"` // "ptt" or "stop"
	Down bool   `json:"down,omitempty"`
}

// VoiceMessage is a JSON message the server sends on the voice socket.
// Binary messages are a sentence's audio: a 4-byte little-endian sentence
// number, then 16-bit little-endian PCM in the format its "sentence"
// message named.
type VoiceMessage struct {
	// Type: ready, speech_start, partial, final, ignored, reply,
	// reply_end, sentence, stop, error.
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Sentence int    `json:"sentence,omitempty"`
	// SampleRate and Channels: the format of a sentence's audio (sentence)
	// or of the audio the server takes (ready).
	SampleRate int    `json:"sample_rate,omitempty"`
	Channels   int    `json:"channels,omitempty"`
	Ms         int64  `json:"ms,omitempty"` // how long a sentence's audio lasts
	Reason     string `json:"reason,omitempty"`
	// Agent, Mode, Wake and Speaks: what ready says about the session.
	Agent  string `json:"agent,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Wake   string `json:"wake,omitempty"`
	Speaks *bool  `json:"speaks,omitempty"`
}

// Limits of the voice socket.
const (
	// voiceMaxMessage bounds a message from the page: a second of audio
	// is 32000 bytes, and the page sends 20 ms at a time.
	voiceMaxMessage = 64 << 10
	// voiceMaxWake bounds the wake phrase.
	voiceMaxWake = 100
	// voiceStartWait is how long the page has to send its start message.
	voiceStartWait = 10 * time.Second
)

func withVoice(o *Options) bool { return o.Voice != nil }

// voiceSocket serves GET /api/conversations/{id}/voice.
func (a *API) voiceSocket(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	conv, err := a.svc.Conversation(r.Context(), id)
	if err != nil {
		return err
	}
	if conv.AgentID == nil {
		return fmt.Errorf("%w: conversation %s has no agent to talk to", core.ErrInvalid, id)
	}
	agent, err := a.svc.AgentName(r.Context(), *conv.AgentID)
	if err != nil {
		return err
	}
	eng, _, err := a.opts.Voice.VoiceFor(agent)
	var off error
	if errors.Is(err, core.ErrVoiceOff) || (err == nil && eng.Transcriber == nil) {
		off = &httpError{status: http.StatusConflict, msg: fmt.Sprintf("agent %s does not hear speech: set voice.transcribe in its settings (docs/voice.md)", agent)}
	} else if err != nil {
		return err
	}
	if r.Header.Get("Upgrade") == "" {
		if off != nil {
			return off
		}
		return &httpError{status: http.StatusUpgradeRequired, msg: "this is a WebSocket: connect with Upgrade: websocket"}
	}
	// The origin was checked before the handler (refuseOtherSites: this
	// site, or an origin of Options.AllowedOrigins), as for every route.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		a.log.InfoContext(r.Context(), "voice: websocket handshake failed", "error", err)
		return nil // Accept answered
	}
	if off != nil {
		// A page cannot read a refused handshake's answer; it reads the
		// close reason.
		_ = c.Close(websocket.StatusPolicyViolation, closeReason(off.Error()))
		return nil
	}
	c.SetReadLimit(voiceMaxMessage)
	vs := &voiceConn{a: a, c: c, conv: id, agent: agent, speaks: eng.Speaker != nil, caller: caller(r)}
	if p := principal(r); p.Kind == PrincipalPerson {
		if person, err := a.svc.Person(r.Context(), p.PersonID); err == nil {
			vs.userName = person.DisplayName
		}
	}
	err = vs.run(r.Context())
	switch status := websocket.CloseStatus(err); {
	case err == nil, status == websocket.StatusNormalClosure, status == websocket.StatusGoingAway:
		_ = c.Close(websocket.StatusNormalClosure, "")
	case errors.Is(err, context.Canceled):
		_ = c.CloseNow()
	default:
		var pe *voiceProtocolError
		if errors.As(err, &pe) {
			_ = c.Close(websocket.StatusPolicyViolation, closeReason(pe.msg))
			return nil
		}
		a.log.InfoContext(r.Context(), "voice: session ended", "conversation_id", id, "error", err)
		_ = c.Close(websocket.StatusInternalError, "the voice session failed")
	}
	return nil
}

// closeReason fits a reason into a close frame (at most 123 bytes), cut
// at a character boundary.
func closeReason(s string) string {
	const max = 123
	if len(s) <= max {
		return s
	}
	s = s[:max-len("…")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// voiceProtocolError is a message from the page the protocol does not
// allow; the socket closes with it as the reason.
type voiceProtocolError struct{ msg string }

func (e *voiceProtocolError) Error() string { return e.msg }

func protocolErr(format string, args ...any) error {
	return &voiceProtocolError{msg: fmt.Sprintf(format, args...)}
}

// voiceConn is one voice socket.
type voiceConn struct {
	a        *API
	c        *websocket.Conn
	conv     uuid.UUID
	agent    string
	speaks   bool
	caller   string
	userName string

	writeMu sync.Mutex
}

// write sends a JSON message or a binary frame, one at a time.
func (v *voiceConn) write(ctx context.Context, typ websocket.MessageType, b []byte) error {
	v.writeMu.Lock()
	defer v.writeMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return v.c.Write(ctx, typ, b)
}

func (v *voiceConn) writeJSON(ctx context.Context, m VoiceMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return v.write(ctx, websocket.MessageText, b)
}

func (v *voiceConn) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-v.a.closing: // the server shuts down
			_ = v.c.Close(websocket.StatusGoingAway, "the server is shutting down")
		case <-ctx.Done():
		}
	}()

	start, err := v.readStart(ctx)
	if err != nil {
		return err
	}
	wake := strings.TrimSpace(start.Wake)
	if wake == "" && start.WakeName {
		wake = v.agent
	}
	opts := live.Options{
		Mode:   live.Mode(start.Mode),
		Wake:   wake,
		Format: voice.Speech,
		Listen: func(ctx context.Context) (live.Utterance, error) {
			l, err := v.a.opts.Voice.Listen(ctx, v.agent, v.caller, voice.Speech)
			if err != nil {
				return nil, err
			}
			return &voiceUtterance{v: v, l: l, context: start.Context}, nil
		},
		Send:   func(ev live.Event) error { return v.send(ctx, ev) },
		Logger: v.a.log,
	}
	if v.speaks {
		opts.Speak = func(ctx context.Context, play live.Play) (live.Speech, error) {
			return v.a.opts.Voice.SpeakReply(ctx, core.ReplySpeechOptions{Conversation: v.conv, Agent: v.agent, Play: core.PlayFunc(play)})
		}
	}
	session, err := live.Start(ctx, opts)
	if err != nil {
		return protocolErr("%v", err)
	}
	defer session.Close()

	// The reply's text as it streams, for the page to show beside the
	// speech (the chat view has it from its own stream too).
	events, unsubscribe := v.a.svc.Hub().Subscribe(v.conv, 1024)
	defer unsubscribe()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-events:
				var m VoiceMessage
				switch ev.Kind {
				case core.EventDelta:
					m = VoiceMessage{Type: "reply", Text: ev.Text}
				case core.EventTurnEnd:
					m = VoiceMessage{Type: "reply_end"}
				default:
					continue
				}
				if err := v.writeJSON(ctx, m); err != nil {
					cancel()
					return
				}
			}
		}
	}()

	speaks := v.speaks
	if err := v.writeJSON(ctx, VoiceMessage{Type: "ready", Agent: v.agent, Mode: string(opts.Mode), Wake: opts.Wake, Speaks: &speaks,
		SampleRate: voice.Speech.SampleRate, Channels: voice.Speech.Channels}); err != nil {
		return err
	}
	for {
		typ, b, err := v.c.Read(ctx)
		if err != nil {
			return err
		}
		if typ == websocket.MessageBinary {
			if len(b)%2 != 0 {
				return protocolErr("audio frames are 16-bit samples: a frame of %d bytes", len(b))
			}
			if err := session.Audio(b); err != nil {
				return err
			}
			continue
		}
		var m voiceControl
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return protocolErr("a control message is not JSON of {type, down}: %v", err)
		}
		switch m.Type {
		case "ptt":
			if err := session.PushToTalk(m.Down); err != nil {
				return protocolErr("%v", err)
			}
		case "stop":
			return nil
		default:
			return protocolErr("unknown control message type %q (want ptt or stop)", m.Type)
		}
	}
}

// readStart reads and checks the page's first message.
func (v *voiceConn) readStart(ctx context.Context) (*VoiceStart, error) {
	rctx, cancel := context.WithTimeout(ctx, voiceStartWait)
	defer cancel()
	typ, b, err := v.c.Read(rctx)
	if err != nil {
		if rctx.Err() != nil && ctx.Err() == nil {
			return nil, protocolErr("no start message within %s", voiceStartWait)
		}
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, protocolErr("the first message must be the JSON start message, not audio")
	}
	var s VoiceStart
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, protocolErr("start message: %v", err)
	}
	switch {
	case s.Type != "start":
		return nil, protocolErr("the first message must have type \"start\", not %q", s.Type)
	case s.SampleRate != 0 && s.SampleRate != voice.Speech.SampleRate:
		return nil, protocolErr("sample_rate %d: the page must send %d Hz", s.SampleRate, voice.Speech.SampleRate)
	case len(s.Wake) > voiceMaxWake:
		return nil, protocolErr("wake: at most %d characters", voiceMaxWake)
	case len(s.Context) > core.MaxPageContext:
		return nil, protocolErr("context: at most %d bytes", core.MaxPageContext)
	}
	switch live.Mode(s.Mode) {
	case "", live.ModeVoice, live.ModePushToTalk:
	default:
		return nil, protocolErr("mode %q: want %q or %q", s.Mode, live.ModeVoice, live.ModePushToTalk)
	}
	return &s, nil
}

// send turns a session event into a message on the socket.
func (v *voiceConn) send(ctx context.Context, ev live.Event) error {
	switch ev.Kind {
	case live.EventAudio:
		b := make([]byte, 4+len(ev.Frame))
		binary.LittleEndian.PutUint32(b, uint32(ev.Sentence))
		copy(b[4:], ev.Frame)
		return v.write(ctx, websocket.MessageBinary, b)
	case live.EventSentence:
		return v.writeJSON(ctx, VoiceMessage{Type: string(ev.Kind), Sentence: ev.Sentence, Text: ev.Text,
			SampleRate: ev.Format.SampleRate, Channels: ev.Format.Channels, Ms: ev.Audio.Milliseconds()})
	}
	return v.writeJSON(ctx, VoiceMessage{Type: string(ev.Kind), Text: ev.Text, Sentence: ev.Sentence, Reason: ev.Reason})
}

// voiceUtterance is core's Listening bound to the conversation and the
// person: its words are posted as their spoken message.
type voiceUtterance struct {
	v       *voiceConn
	l       *core.Listening
	context string
	heard   *core.Heard
}

func (u *voiceUtterance) Write(p []byte) (int, error) {
	n, err := u.l.Write(p)
	if errors.Is(err, core.ErrUtteranceTooLong) {
		err = fmt.Errorf("%w: %w", live.ErrTooLong, err)
	}
	return n, err
}

func (u *voiceUtterance) Partials() <-chan voice.Transcript { return u.l.Partials() }

func (u *voiceUtterance) Finish(ctx context.Context) (string, error) {
	h, err := u.l.Finish(ctx)
	if errors.Is(err, core.ErrNothingHeard) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	u.heard = h
	return h.Text, nil
}

func (u *voiceUtterance) Post(ctx context.Context) error {
	if u.heard == nil {
		return errors.New("nothing was heard to post")
	}
	ctxText := u.context
	if ctxText == "" {
		ctxText = "The web console's chat view; the person spoke this message into the microphone."
	}
	_, err := u.v.a.opts.Voice.PostSpoken(ctx, u.v.conv, u.v.caller, u.heard, core.MessageOptions{PageContext: ctxText, UserName: u.v.userName})
	return err
}

func (u *voiceUtterance) Close() error { return u.l.Close() }
