package dave

import (
	"bytes"
	"errors"
	"testing"
)

// TestSessionsAmongThemselves runs the group's life between this
// package's own sessions (no node needed): A alone commits B's and C's
// additions, then B's removal, whose update path C decrypts; every
// member's epoch authenticator agrees and frames flow between A and C.
func TestSessionsAmongThemselves(t *testing.T) {
	const a, b, c = 1001, 1002, 1003
	gw := newFakeGateway(t, channelID)
	sessions := map[uint64]*Session{}
	kps := map[uint64][]byte{}
	for _, id := range []uint64{a, b, c} {
		s, err := NewSession(id, channelID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetExternalSender(gw.externalSender()); err != nil {
			t.Fatal(err)
		}
		if kps[id], err = s.KeyPackage(); err != nil {
			t.Fatal(err)
		}
		sessions[id] = s
	}
	all := []uint64{a, b, c}
	// step has every member in members take the proposal, A's commit win,
	// and the new member (if any) join by its Welcome.
	step := func(epoch uint64, prop []byte, members []uint64, joiner uint64) {
		t.Helper()
		var commit, welcome []byte
		for _, id := range members {
			cm, w, err := sessions[id].ProcessProposals(proposalsBody(prop), all)
			if err != nil {
				t.Fatalf("epoch %d: member %d: %v", epoch, id, err)
			}
			if id == a {
				commit, welcome = cm, w
				if f, err := parsePublicMessage(cm); err != nil || (f.commit.path != nil) != (joiner == 0) {
					t.Fatalf("epoch %d: A's commit (err %v): an update path only for removals", epoch, err)
				}
			}
		}
		for _, id := range members {
			if err := sessions[id].ProcessCommit(commit); err != nil {
				t.Fatalf("epoch %d: member %d: commit: %v", epoch, id, err)
			}
		}
		if joiner != 0 {
			if err := sessions[joiner].ProcessWelcome(welcome); err != nil {
				t.Fatalf("epoch %d: member %d: welcome: %v", epoch, joiner, err)
			}
		}
	}
	step(0, gw.proposeAdd(t, 0, kps[b]), []uint64{a}, b)
	step(1, gw.proposeAdd(t, 1, kps[c]), []uint64{a, b}, c)
	leafB, ok := sessions[a].LeafIndex(b)
	if !ok {
		t.Fatal("B has no leaf")
	}
	remove := gw.proposeRemove(t, 2, leafB)
	if _, _, err := sessions[b].ProcessProposals(proposalsBody(remove), all); err == nil || !errors.Is(err, ErrRemoved) {
		t.Fatalf("B committing its own removal: %v", err)
	}
	step(2, remove, []uint64{a, c}, 0)

	for _, id := range []uint64{a, c} {
		if e, _ := sessions[id].Epoch(); e != 3 {
			t.Fatalf("member %d at epoch %d, want 3", id, e)
		}
	}
	if !bytes.Equal(sessions[a].EpochAuthenticator(), sessions[c].EpochAuthenticator()) {
		t.Fatal("A's and C's epoch authenticators differ")
	}
	enc, err := sessions[a].Encryptor()
	if err != nil {
		t.Fatal(err)
	}
	frame, err := enc.EncryptOpus([]byte("to C"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := sessions[c].Decryptor(a)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dec.Decrypt(frame); err != nil || string(got) != "to C" {
		t.Fatalf("C decrypted %q, %v", got, err)
	}
	if _, err := sessions[c].Decryptor(b); err == nil {
		t.Fatal("a decryptor for a removed member")
	}
}
