package dave

import (
	"crypto/ecdsa"
	"encoding/binary"
	"testing"

	"golang.org/x/crypto/cryptobyte"
)

// fakeGateway plays the voice gateway's part in DAVE: the group's external
// sender, which proposes adding and removing members (opcodes 25 and 27).
type fakeGateway struct {
	key     *ecdsa.PrivateKey
	sender  externalSender
	groupID []byte
}

func newFakeGateway(t *testing.T, channelID uint64) *fakeGateway {
	t.Helper()
	key, err := newSignatureKey()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeGateway{
		key:     key,
		sender:  externalSender{signatureKey: signaturePublicKey(key), credential: basicCredential(0)},
		groupID: binary.BigEndian.AppendUint64(nil, channelID),
	}
}

// externalSender is opcode 25's body.
func (g *fakeGateway) externalSender() []byte { return marshal(g.sender.add) }

// propose returns an MLSMessage holding a PublicMessage from external
// sender 0 with proposal p for epoch (RFC 9420 §6.2).
func (g *fakeGateway) propose(t *testing.T, epoch uint64, p *proposal) []byte {
	t.Helper()
	content := marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, g.groupID)
		b.AddUint64(epoch)
		b.AddUint8(senderExternal)
		b.AddUint32(0)
		addOpaque(b, nil) // authenticated_data
		b.AddUint8(contentProposal)
		p.encode(b)
	})
	f := &framedContent{senderType: senderExternal, raw: content}
	sig, err := signWithLabel(g.key, "FramedContentTBS", f.tbs(nil))
	if err != nil {
		t.Fatal(err)
	}
	return marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(protocolVersion)
		b.AddUint16(wirePublic)
		b.AddBytes(content)
		addOpaque(b, sig)
	})
}

func (g *fakeGateway) proposeAdd(t *testing.T, epoch uint64, keyPackage []byte) []byte {
	t.Helper()
	kp, err := parseKeyPackage(keyPackage)
	if err != nil {
		t.Fatal(err)
	}
	return g.propose(t, epoch, &proposal{typ: proposalAdd, add: kp})
}

func (g *fakeGateway) proposeRemove(t *testing.T, epoch uint64, leaf uint32) []byte {
	t.Helper()
	return g.propose(t, epoch, &proposal{typ: proposalRemove, removed: leaf})
}

// proposalVector is the MLS messages of opcode 27's body, as a vector.
func proposalVector(msgs ...[]byte) []byte {
	return marshal(func(b *cryptobyte.Builder) {
		addVec(b, func(b *cryptobyte.Builder) {
			for _, m := range msgs {
				b.AddBytes(m)
			}
		})
	})
}

// proposalsBody is opcode 27's body: operation type append, then the
// vector.
func proposalsBody(msgs ...[]byte) []byte {
	return append([]byte{proposalsAppend}, proposalVector(msgs...)...)
}
