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
	const a, b, c, d = 1001, 1002, 1003, 1004
	gw := newFakeGateway(t, channelID)
	sessions := map[uint64]*Session{}
	kps := map[uint64][]byte{}
	for _, id := range []uint64{a, b, c, d} {
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
	all := []uint64{a, b, c, d}
	// step has every member in members take the proposal, A's commit win,
	// and the new member (if any) join by its Welcome.
	step := func(epoch uint64, props [][]byte, members []uint64, joiner uint64, withPath bool) {
		t.Helper()
		var commit, welcome []byte
		for _, id := range members {
			cm, w, err := sessions[id].ProcessProposals(proposalsBody(props...), all)
			if err != nil {
				t.Fatalf("epoch %d: member %d: %v", epoch, id, err)
			}
			if id == a {
				commit, welcome = cm, w
				if f, err := parsePublicMessage(cm); err != nil || (f.commit.path != nil) != withPath {
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
	step(0, [][]byte{gw.proposeAdd(t, 0, kps[b])}, []uint64{a}, b, false)
	step(1, [][]byte{gw.proposeAdd(t, 1, kps[c])}, []uint64{a, b}, c, false)
	leafB, ok := sessions[a].LeafIndex(b)
	if !ok {
		t.Fatal("B has no leaf")
	}
	remove := gw.proposeRemove(t, 2, leafB)
	if _, _, err := sessions[b].ProcessProposals(proposalsBody(remove), all); err == nil || !errors.Is(err, ErrRemoved) {
		t.Fatalf("B committing its own removal: %v", err)
	}
	step(2, [][]byte{remove}, []uint64{a, c}, 0, true)
	if !bytes.Equal(sessions[a].EpochAuthenticator(), sessions[c].EpochAuthenticator()) {
		t.Fatal("epoch 3: A's and C's epoch authenticators differ")
	}
	// Epoch 4: C leaves and D joins in one commit; D's Welcome carries the
	// path secret of the lowest node above it on A's path.
	leafC, _ := sessions[a].LeafIndex(c)
	step(3, [][]byte{gw.proposeRemove(t, 3, leafC), gw.proposeAdd(t, 3, kps[d])}, []uint64{a}, d, true)
	if len(sessions[d].group.nodeKeys) < 2 {
		t.Fatal("D got no path secret with its Welcome")
	}
	if !bytes.Equal(sessions[a].EpochAuthenticator(), sessions[d].EpochAuthenticator()) {
		t.Fatal("A's and D's epoch authenticators differ")
	}
	for _, id := range []uint64{a, d} {
		if e, _ := sessions[id].Epoch(); e != 4 {
			t.Fatalf("member %d at epoch %d, want 4", id, e)
		}
	}
	enc, err := sessions[a].Encryptor()
	if err != nil {
		t.Fatal(err)
	}
	frame, err := enc.EncryptOpus([]byte("to D"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := sessions[d].Decryptor(a)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dec.Decrypt(frame); err != nil || string(got) != "to D" {
		t.Fatalf("D decrypted %q, %v", got, err)
	}
	for _, gone := range []uint64{b, c} {
		if _, err := sessions[d].Decryptor(gone); err == nil {
			t.Fatalf("a decryptor for removed member %d", gone)
		}
	}
}
