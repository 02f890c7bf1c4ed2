package voice

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/discord/dave"
)

const (
	channel = 987654321987654321
	userA   = 111111111111111111
	userB   = 222222222222222222
	userC   = 333333333333333333
)

// gatewayConn is one client's side of a fake voice gateway: it numbers the
// binary messages it sends, as the gateway does.
type gatewayConn struct {
	t   *testing.T
	d   *DAVE
	seq uint16
}

// clock is the tests' time.
var clock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newConn(t *testing.T, user uint64) (*gatewayConn, []Message) {
	t.Helper()
	d, err := NewDAVE(DAVEOptions{UserID: user, ChannelID: channel, Now: func() time.Time { return clock },
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return &gatewayConn{t: t, d: d}, out
}

func (c *gatewayConn) binary(op int, payload []byte) []Message {
	c.t.Helper()
	c.seq++
	msg := binary.BigEndian.AppendUint16(nil, c.seq)
	out, err := c.d.HandleBinary(context.Background(), append(append(msg, byte(op)), payload...))
	if err != nil {
		c.t.Fatalf("opcode %d: %v", op, err)
	}
	return out
}

func (c *gatewayConn) json(op int, data string) []Message {
	c.t.Helper()
	out, err := c.d.HandleJSON(context.Background(), op, json.RawMessage(data))
	if err != nil {
		c.t.Fatalf("opcode %d: %v", op, err)
	}
	return out
}

func withTransition(id uint16, b []byte) []byte {
	return append(binary.BigEndian.AppendUint16(nil, id), b...)
}

func only(t *testing.T, msgs []Message, op int) Message {
	t.Helper()
	if len(msgs) != 1 || msgs[0].Op != op {
		t.Fatalf("replies %+v, want one opcode %d", msgs, op)
	}
	return msgs[0]
}

// TestDAVEHandshakeOverTheGateway plays the voice gateway between two
// clients: A is alone, B joins; A commits the gateway's proposal; the
// gateway announces A's commit to A and sends its Welcome to B under
// transition 5; both say they are ready; frames flow once the transition
// is executed, and not before.
func TestDAVEHandshakeOverTheGateway(t *testing.T) {
	gw, err := dave.NewExternalSender()
	if err != nil {
		t.Fatal(err)
	}
	a, outA := newConn(t, userA)
	only(t, outA, OpMLSKeyPackage)
	a.binary(OpMLSExternalSender, gw.Package())

	b, outB := newConn(t, userB)
	kpB := only(t, outB, OpMLSKeyPackage).Binary
	b.binary(OpMLSExternalSender, gw.Package())
	a.json(OpClientsConnect, fmt.Sprintf(`{"user_ids":["%d"]}`, userB))
	b.json(OpClientsConnect, fmt.Sprintf(`{"user_ids":["%d"]}`, userA))

	add, err := gw.ProposeAdd(channel, 0, kpB)
	if err != nil {
		t.Fatal(err)
	}
	cw := only(t, a.binary(OpMLSProposals, dave.ProposalsAppend(add)), OpMLSCommitWelcome).Binary
	commit, welcome, err := dave.SplitCommitWelcome(cw)
	if err != nil || welcome == nil {
		t.Fatalf("splitting A's commit and welcome: %v (welcome %x)", err, welcome)
	}

	ready := only(t, a.binary(OpMLSAnnounceCommit, withTransition(5, commit)), OpReadyForTransition)
	if b, _ := ready.Bytes(); string(b) != `{"op":23,"d":{"transition_id":5}}` {
		t.Fatalf("ready for transition: %s", b)
	}
	only(t, b.binary(OpMLSWelcome, withTransition(5, welcome)), OpReadyForTransition)

	if _, err := a.d.Encrypt([]byte("early")); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("encrypted before the transition was executed: %v", err)
	}
	a.json(OpExecuteTransition, `{"transition_id":5}`)
	b.json(OpExecuteTransition, `{"transition_id":5}`)

	for _, dir := range []struct {
		from, to *gatewayConn
		sender   uint64
	}{{a, b, userA}, {b, a, userB}} {
		frame := []byte("opus frame")
		enc, err := dir.from.d.Encrypt(frame)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dir.to.d.Decrypt(dir.sender, enc)
		if err != nil || !bytes.Equal(got, frame) {
			t.Fatalf("frame from %d: %q, %v", dir.sender, got, err)
		}
	}

	// A third member joins under transition 9. A frame A sealed before
	// it still opens for B for 10 s, from the previous epoch's keys.
	early, err := a.d.Encrypt([]byte("sealed before transition 9"))
	if err != nil {
		t.Fatal(err)
	}
	late, err := a.d.Encrypt([]byte("sealed before transition 9, opened late"))
	if err != nil {
		t.Fatal(err)
	}
	c, outC := newConn(t, userC)
	kpC := only(t, outC, OpMLSKeyPackage).Binary
	c.binary(OpMLSExternalSender, gw.Package())
	for _, conn := range []*gatewayConn{a, b} {
		conn.json(OpClientsConnect, fmt.Sprintf(`{"user_ids":["%d"]}`, userC))
	}
	c.json(OpClientsConnect, fmt.Sprintf(`{"user_ids":["%d","%d"]}`, userA, userB))
	addC, err := gw.ProposeAdd(channel, 1, kpC)
	if err != nil {
		t.Fatal(err)
	}
	cw = only(t, a.binary(OpMLSProposals, dave.ProposalsAppend(addC)), OpMLSCommitWelcome).Binary
	only(t, b.binary(OpMLSProposals, dave.ProposalsAppend(addC)), OpMLSCommitWelcome) // B's loses
	commit, welcome, err = dave.SplitCommitWelcome(cw)
	if err != nil {
		t.Fatal(err)
	}
	only(t, a.binary(OpMLSAnnounceCommit, withTransition(9, commit)), OpReadyForTransition)
	only(t, b.binary(OpMLSAnnounceCommit, withTransition(9, commit)), OpReadyForTransition)
	only(t, c.binary(OpMLSWelcome, withTransition(9, welcome)), OpReadyForTransition)
	for _, conn := range []*gatewayConn{a, b, c} {
		conn.json(OpExecuteTransition, `{"transition_id":9}`)
	}
	if got, err := b.d.Decrypt(userA, early); err != nil || string(got) != "sealed before transition 9" {
		t.Fatalf("a frame of the previous epoch: %q, %v", got, err)
	}
	now, err := a.d.Encrypt([]byte("after transition 9"))
	if err != nil {
		t.Fatal(err)
	}
	for _, conn := range []*gatewayConn{b, c} {
		if got, err := conn.d.Decrypt(userA, now); err != nil || string(got) != "after transition 9" {
			t.Fatalf("user %d: %q, %v", conn.d.opts.UserID, got, err)
		}
	}
	clock = clock.Add(11 * time.Second)
	if got, err := b.d.Decrypt(userA, late); err == nil {
		t.Fatalf("a frame of the previous epoch opened 11 s after the transition: %q", got)
	}

	// A Welcome that does not open: B flags it and sends a new key package.
	bad := bytes.Clone(welcome)
	bad[len(bad)-1] ^= 1
	out := b.binary(OpMLSWelcome, withTransition(6, bad))
	if len(out) != 2 || out[0].Op != OpMLSInvalidCommitWelcome || out[1].Op != OpMLSKeyPackage {
		t.Fatalf("replies to a bad welcome: %+v", out)
	}
	if got, _ := out[0].Bytes(); string(got) != `{"op":31,"d":{"transition_id":6}}` {
		t.Fatalf("invalid commit welcome: %s", got)
	}
	if kp, _ := out[1].Bytes(); kp[0] != OpMLSKeyPackage || len(kp) < 100 {
		t.Fatalf("key package message: %x", kp)
	}
}

// TestDAVEDowngrade: a transition to protocol version 0 turns encryption
// off once executed.
func TestDAVEDowngrade(t *testing.T) {
	a, _ := newConn(t, userA)
	only(t, a.json(OpPrepareTransition, `{"transition_id":7,"protocol_version":0}`), OpReadyForTransition)
	a.json(OpExecuteTransition, `{"transition_id":7}`)
	got, err := a.d.Encrypt([]byte("plain"))
	if err != nil || string(got) != "plain" {
		t.Fatalf("after the downgrade: %q, %v", got, err)
	}
	// And an unknown transition changes nothing.
	a.json(OpExecuteTransition, `{"transition_id":8}`)
	if a.d.version != 0 {
		t.Fatalf("version %d after an unknown transition", a.d.version)
	}
	// prepare_epoch 1 starts a new group with a new key package.
	only(t, a.json(OpPrepareEpoch, `{"protocol_version":1,"epoch":1}`), OpMLSKeyPackage)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
