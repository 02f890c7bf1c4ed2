package dave

import (
	"testing"

	"golang.org/x/crypto/cryptobyte"
)

// fakeGateway is an ExternalSender for one channel, failing the test on
// errors.
type fakeGateway struct {
	*ExternalSender
	channelID uint64
}

func newFakeGateway(t *testing.T, channelID uint64) *fakeGateway {
	t.Helper()
	e, err := NewExternalSender()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeGateway{e, channelID}
}

func (g *fakeGateway) externalSender() []byte { return g.Package() }

func (g *fakeGateway) proposeAdd(t *testing.T, epoch uint64, keyPackage []byte) []byte {
	t.Helper()
	m, err := g.ProposeAdd(g.channelID, epoch, keyPackage)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (g *fakeGateway) proposeRemove(t *testing.T, epoch uint64, leaf uint32) []byte {
	t.Helper()
	m, err := g.ProposeRemove(g.channelID, epoch, leaf)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// proposalVector is the MLS messages of opcode 27's body, as a vector
// (what davey's processProposals takes).
func proposalVector(msgs ...[]byte) []byte {
	return marshal(func(b *cryptobyte.Builder) {
		addVec(b, func(b *cryptobyte.Builder) {
			for _, m := range msgs {
				b.AddBytes(m)
			}
		})
	})
}

func proposalsBody(msgs ...[]byte) []byte { return ProposalsAppend(msgs...) }
