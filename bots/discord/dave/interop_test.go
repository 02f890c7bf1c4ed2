package dave

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/switchboardhq/switchboard/internal/davetest"
)

const (
	channelID = 424242424242424242
	daveyUser = 111111111111111111 // the committer, in davey
	goUser    = 222222222222222222 // this package
	thirdUser = 333333333333333333 // a second davey session
)

type daveyState struct {
	Epoch         *uint64  `json:"epoch"`
	Ready         bool     `json:"ready"`
	Users         []string `json:"users"`
	Authenticator string   `json:"authenticator"`
}

type daveyPeer struct {
	t    *testing.T
	d    *davetest.Davey
	name string
}

func (p daveyPeer) call(req map[string]any, out any) {
	p.t.Helper()
	req["session"] = p.name
	if err := p.d.Call(req, out); err != nil {
		p.t.Fatalf("davey %s %v: %v", p.name, req["op"], err)
	}
}

func (p daveyPeer) bytes(req map[string]any) []byte {
	p.t.Helper()
	var r struct{ Data string }
	p.call(req, &r)
	b, err := hex.DecodeString(r.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

func (p daveyPeer) state() daveyState {
	p.t.Helper()
	var s daveyState
	p.call(map[string]any{"op": "state"}, &s)
	return s
}

func (p daveyPeer) processProposals(users []uint64, msgs ...[]byte) (commit, welcome []byte) {
	p.t.Helper()
	var ids []string
	for _, u := range users {
		ids = append(ids, strconv.FormatUint(u, 10))
	}
	var r struct{ Commit, Welcome string }
	p.call(map[string]any{"op": "processProposals", "operation": 0, "data": hex.EncodeToString(proposalVector(msgs...)), "users": ids}, &r)
	commit, _ = hex.DecodeString(r.Commit)
	welcome, _ = hex.DecodeString(r.Welcome)
	return commit, welcome
}

// checkSameEpoch compares the epoch and the epoch authenticator (RFC 9420
// §8.7), which agree only when both key schedules do.
func checkSameEpoch(t *testing.T, s *Session, p daveyPeer, want uint64) {
	t.Helper()
	st := p.state()
	epoch, ok := s.Epoch()
	if !ok || epoch != want || st.Epoch == nil || *st.Epoch != want {
		t.Fatalf("epochs: Go %d (joined %v), davey %s %v; want %d", epoch, ok, p.name, st.Epoch, want)
	}
	if got := hex.EncodeToString(s.EpochAuthenticator()); got != st.Authenticator {
		t.Fatalf("epoch %d authenticators differ: Go %s, davey %s %s", want, got, p.name, st.Authenticator)
	}
}

// roundTrip has davey encrypt an Opus frame that Go decrypts, and Go
// encrypt one that davey decrypts.
func roundTrip(t *testing.T, s *Session, p daveyPeer, peerUser uint64) {
	t.Helper()
	frame := []byte("\x78\x01opus frame from davey: the quick brown fox")
	enc := p.bytes(map[string]any{"op": "encrypt", "data": hex.EncodeToString(frame)})
	if bytes.Contains(enc, frame[2:]) {
		t.Fatalf("davey's frame holds the plaintext: %x", enc)
	}
	dec, err := s.Decryptor(peerUser)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dec.Decrypt(enc)
	if err != nil {
		t.Fatalf("Go decrypting davey's frame %x: %v", enc, err)
	}
	if !bytes.Equal(got, frame) {
		t.Fatalf("Go decrypted %q, davey encrypted %q", got, frame)
	}
	if _, err := dec.Decrypt(enc); err == nil {
		t.Fatal("Go accepted the same frame twice")
	}

	mine := []byte("\x78\x02opus frame from Go: jumps over the lazy dog")
	e, err := s.Encryptor()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Encryptor(); again != e {
		t.Fatal("a second encryptor in one epoch (its nonces would repeat the first's)")
	}
	for i := range 3 { // several frames: the nonce counts up
		out, err := e.EncryptOpus(mine)
		if err != nil {
			t.Fatal(err)
		}
		back := p.bytes(map[string]any{"op": "decrypt", "user": strconv.FormatUint(goUser, 10), "data": hex.EncodeToString(out)})
		if !bytes.Equal(back, mine) {
			t.Fatalf("frame %d: davey decrypted %q from Go's %x, want %q", i, back, out, mine)
		}
	}
	tampered, err := e.EncryptOpus(mine)
	if err != nil {
		t.Fatal(err)
	}
	tampered[0] ^= 1
	var r struct{ Data string }
	if err := p.d.Call(map[string]any{"op": "decrypt", "session": p.name, "user": strconv.FormatUint(goUser, 10), "data": hex.EncodeToString(tampered)}, &r); err == nil {
		t.Fatalf("davey accepted a tampered frame and returned %s", r.Data)
	}
}

// TestDaveyInterop runs the DAVE handshake against @snazzah/davey: davey
// commits the voice gateway's proposals; this package joins by its Welcome,
// follows its commits through an add (epoch 2) and a removal with an
// update path (epoch 3), and exchanges encrypted Opus frames each epoch.
func TestDaveyInterop(t *testing.T) {
	t.Parallel()
	d := davetest.Start(t, "testdata/davey.cjs")
	var v struct {
		Version  string
		Protocol int
	}
	if err := d.Call(map[string]any{"op": "version"}, &v); err != nil {
		t.Fatal(err)
	}
	t.Logf("davey %s, DAVE protocol version %d", v.Version, v.Protocol)

	gw := newFakeGateway(t, channelID)
	a := daveyPeer{t, d, "a"}
	a.call(map[string]any{"op": "new", "user": strconv.FormatUint(daveyUser, 10), "channel": strconv.FormatUint(channelID, 10)}, nil)
	a.call(map[string]any{"op": "setExternalSender", "data": hex.EncodeToString(gw.externalSender())}, nil)

	s, err := NewSession(goUser, channelID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetExternalSender(gw.externalSender()); err != nil {
		t.Fatal(err)
	}
	kp, err := s.KeyPackage()
	if err != nil {
		t.Fatal(err)
	}

	// Epoch 1: the gateway proposes adding us; davey commits with a
	// Welcome; the gateway announces the commit to davey (opcode 29) and
	// sends us the Welcome (opcode 30).
	commit, welcome := a.processProposals([]uint64{daveyUser, goUser}, gw.proposeAdd(t, 0, kp))
	if len(commit) == 0 || len(welcome) == 0 {
		t.Fatalf("davey made commit %x and welcome %x", commit, welcome)
	}
	a.call(map[string]any{"op": "processCommit", "data": hex.EncodeToString(commit)}, nil)
	// A Welcome into a group with another external sender, or changed, is
	// refused.
	other := newFakeGateway(t, channelID)
	if err := s.SetExternalSender(other.externalSender()); err != nil {
		t.Fatal(err)
	}
	if err := s.ProcessWelcome(welcome); err == nil {
		t.Fatal("joined a group whose external sender is not the gateway's")
	}
	if err := s.SetExternalSender(gw.externalSender()); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(welcome)
	bad[len(bad)-1] ^= 1
	if err := s.ProcessWelcome(bad); err == nil {
		t.Fatal("joined by a changed Welcome")
	}
	if err := s.ProcessWelcome(welcome); err != nil {
		t.Fatalf("joining by davey's Welcome: %v", err)
	}
	checkSameEpoch(t, s, a, 1)
	if got := s.UserIDs(); len(got) != 2 {
		t.Fatalf("members after the Welcome: %v", got)
	}
	roundTrip(t, s, a, daveyUser)

	// Epoch 2: a third member (another davey session) is added; we follow
	// davey's commit.
	c := daveyPeer{t, d, "c"}
	c.call(map[string]any{"op": "new", "user": strconv.FormatUint(thirdUser, 10), "channel": strconv.FormatUint(channelID, 10)}, nil)
	c.call(map[string]any{"op": "setExternalSender", "data": hex.EncodeToString(gw.externalSender())}, nil)
	kpC := c.bytes(map[string]any{"op": "keyPackage"})
	add := gw.proposeAdd(t, 1, kpC)
	// A proposal signed by anyone but the gateway is refused.
	impostor := newFakeGateway(t, channelID)
	if _, _, err := s.ProcessProposals(proposalsBody(impostor.proposeAdd(t, 1, kpC)), []uint64{daveyUser, goUser, thirdUser}); err == nil {
		t.Fatal("accepted a proposal not signed by the external sender")
	}
	// We commit too (every member does); the gateway takes davey's.
	if _, _, err := s.ProcessProposals(proposalsBody(add), []uint64{daveyUser, goUser}); err == nil {
		t.Fatal("accepted adding a user the gateway did not say is in the call")
	}
	if cm, w, err := s.ProcessProposals(proposalsBody(add), []uint64{daveyUser, goUser, thirdUser}); err != nil || cm == nil || w == nil {
		t.Fatalf("our commit of the add: %x, %x, %v", cm, w, err)
	}
	commit, welcome = a.processProposals([]uint64{daveyUser, goUser, thirdUser}, add)
	a.call(map[string]any{"op": "processCommit", "data": hex.EncodeToString(commit)}, nil)
	c.call(map[string]any{"op": "processWelcome", "data": hex.EncodeToString(welcome)}, nil)
	// A commit changed anywhere is refused and leaves the session as it
	// was: a byte in the proposal reference, and the last byte (of the
	// membership tag).
	for _, i := range []int{30, len(commit) - 1} {
		bad := bytes.Clone(commit)
		bad[i] ^= 1
		if err := s.ProcessCommit(bad); err == nil {
			t.Fatalf("accepted davey's commit with byte %d changed", i)
		}
	}
	if err := s.ProcessCommit(commit); err != nil {
		t.Fatalf("following davey's commit adding a member: %v", err)
	}
	checkSameEpoch(t, s, a, 2)
	checkSameEpoch(t, s, c, 2)
	roundTrip(t, s, a, daveyUser)
	roundTrip(t, s, c, thirdUser)

	// Epoch 3: the third member leaves; davey's commit carries an update
	// path whose path secret we decrypt.
	remove := gw.proposeRemove(t, 2, 2)
	if _, _, err := s.ProcessProposals(proposalsBody(remove), []uint64{daveyUser, goUser}); err != nil {
		t.Fatal(err)
	}
	commit, _ = a.processProposals([]uint64{daveyUser, goUser}, remove)
	if f, err := parsePublicMessage(commit); err != nil || f.commit.path == nil {
		t.Fatalf("davey's removal commit has no update path (err %v): the path code is not exercised", err)
	}
	a.call(map[string]any{"op": "processCommit", "data": hex.EncodeToString(commit)}, nil)
	if err := s.ProcessCommit(commit); err != nil {
		t.Fatalf("following davey's commit removing a member: %v", err)
	}
	checkSameEpoch(t, s, a, 3)
	if got := s.UserIDs(); len(got) != 2 {
		t.Fatalf("members after the removal: %v", got)
	}
	roundTrip(t, s, a, daveyUser)
}

// TestDaveyJoinsGo runs it the other way: this package is alone in the
// channel, so it commits the gateway's proposals; davey joins by our
// Welcome, follows our add commit, and then our removal commit, whose
// update path it decrypts and checks.
func TestDaveyJoinsGo(t *testing.T) {
	t.Parallel()
	d := davetest.Start(t, "testdata/davey.cjs")
	gw := newFakeGateway(t, channelID)
	s, err := NewSession(goUser, channelID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetExternalSender(gw.externalSender()); err != nil {
		t.Fatal(err)
	}
	newPeer := func(name string, user uint64) (daveyPeer, []byte) {
		p := daveyPeer{t, d, name}
		p.call(map[string]any{"op": "new", "user": strconv.FormatUint(user, 10), "channel": strconv.FormatUint(channelID, 10)}, nil)
		p.call(map[string]any{"op": "setExternalSender", "data": hex.EncodeToString(gw.externalSender())}, nil)
		return p, p.bytes(map[string]any{"op": "keyPackage"})
	}

	// Epoch 1: we add davey to our pending group.
	a, kpA := newPeer("a", daveyUser)
	commit, welcome, err := s.ProcessProposals(proposalsBody(gw.proposeAdd(t, 0, kpA)), []uint64{daveyUser, goUser})
	if err != nil || commit == nil || welcome == nil {
		t.Fatalf("committing the add: %x, %x, %v", commit, welcome, err)
	}
	if _, joined := s.Epoch(); joined {
		t.Fatal("in the group before the gateway announced the commit")
	}
	if err := s.ProcessCommit(commit); err != nil {
		t.Fatal(err)
	}
	a.call(map[string]any{"op": "processWelcome", "data": hex.EncodeToString(welcome)}, nil)
	checkSameEpoch(t, s, a, 1)
	roundTrip(t, s, a, daveyUser)

	// Epoch 2: a third member; davey commits too, the gateway takes ours.
	c, kpC := newPeer("c", thirdUser)
	add := gw.proposeAdd(t, 1, kpC)
	commit, welcome, err = s.ProcessProposals(proposalsBody(add), []uint64{daveyUser, goUser, thirdUser})
	if err != nil {
		t.Fatal(err)
	}
	a.processProposals([]uint64{daveyUser, goUser, thirdUser}, add)
	a.call(map[string]any{"op": "processCommit", "data": hex.EncodeToString(commit)}, nil)
	c.call(map[string]any{"op": "processWelcome", "data": hex.EncodeToString(welcome)}, nil)
	if err := s.ProcessCommit(commit); err != nil {
		t.Fatal(err)
	}
	checkSameEpoch(t, s, a, 2)
	checkSameEpoch(t, s, c, 2)
	roundTrip(t, s, c, thirdUser)

	// Epoch 3: davey (leaf 1) leaves; our commit has an update path,
	// encrypted to the third member.
	remove := gw.proposeRemove(t, 2, 1)
	commit, welcome, err = s.ProcessProposals(proposalsBody(remove), []uint64{daveyUser, goUser})
	if err != nil || welcome != nil {
		t.Fatalf("committing the removal: welcome %x, %v", welcome, err)
	}
	if f, err := parsePublicMessage(commit); err != nil || f.commit.path == nil {
		t.Fatalf("our removal commit has no update path (err %v)", err)
	}
	c.processProposals([]uint64{goUser, thirdUser}, remove)
	c.call(map[string]any{"op": "processCommit", "data": hex.EncodeToString(commit)}, nil)
	if err := s.ProcessCommit(commit); err != nil {
		t.Fatal(err)
	}
	checkSameEpoch(t, s, c, 3)
	if got := s.UserIDs(); len(got) != 2 {
		t.Fatalf("members after the removal: %v", got)
	}
	roundTrip(t, s, c, thirdUser)

	// Epoch 4: the third member leaves and a fourth joins in one commit;
	// the fourth's Welcome carries a path secret, whose node keys davey
	// derives and checks against our tree.
	const fourthUser = 444444444444444444
	dd, kpD := newPeer("d", fourthUser)
	leafC, _ := s.LeafIndex(thirdUser)
	props := [][]byte{gw.proposeRemove(t, 3, leafC), gw.proposeAdd(t, 3, kpD)}
	commit, welcome, err = s.ProcessProposals(proposalsBody(props...), []uint64{goUser, thirdUser, fourthUser})
	if err != nil || welcome == nil {
		t.Fatalf("committing a removal and an addition: welcome %x, %v", welcome, err)
	}
	if err := s.ProcessCommit(commit); err != nil {
		t.Fatal(err)
	}
	dd.call(map[string]any{"op": "processWelcome", "data": hex.EncodeToString(welcome)}, nil)
	checkSameEpoch(t, s, dd, 4)
	roundTrip(t, s, dd, fourthUser)
}
