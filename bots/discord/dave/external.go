package dave

import (
	"crypto/ecdsa"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/cryptobyte"
)

// ExternalSender plays the voice gateway's part in DAVE: the group's
// external sender, which proposes adding and removing members (opcodes 25
// and 27). It is for fake voice gateways in tests; a bot never needs it.
type ExternalSender struct {
	key    *ecdsa.PrivateKey
	sender externalSender
}

// NewExternalSender makes an external sender with a fresh key.
func NewExternalSender() (*ExternalSender, error) {
	key, err := newSignatureKey()
	if err != nil {
		return nil, err
	}
	return &ExternalSender{key: key, sender: externalSender{signatureKey: signaturePublicKey(key), credential: basicCredential(0)}}, nil
}

// Package is the body of opcode 25 (DAVE_MLS_EXTERNAL_SENDER).
func (e *ExternalSender) Package() []byte { return marshal(e.sender.add) }

// propose returns an MLSMessage holding a PublicMessage from external
// sender 0 with proposal p for epoch of channel's group (RFC 9420 §6.2).
func (e *ExternalSender) propose(channelID, epoch uint64, p *proposal) ([]byte, error) {
	content := marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, binary.BigEndian.AppendUint64(nil, channelID))
		b.AddUint64(epoch)
		b.AddUint8(senderExternal)
		b.AddUint32(0)
		addOpaque(b, nil) // authenticated_data
		b.AddUint8(contentProposal)
		p.encode(b)
	})
	f := &framedContent{senderType: senderExternal, raw: content}
	sig, err := signWithLabel(e.key, "FramedContentTBS", f.tbs(nil))
	if err != nil {
		return nil, err
	}
	return marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(protocolVersion)
		b.AddUint16(wirePublic)
		b.AddBytes(content)
		addOpaque(b, sig)
	}), nil
}

// ProposeAdd proposes adding the member whose key package (opcode 26) is
// given, in epoch of channelID's group.
func (e *ExternalSender) ProposeAdd(channelID, epoch uint64, keyPackage []byte) ([]byte, error) {
	kp, err := parseKeyPackage(keyPackage)
	if err != nil {
		return nil, err
	}
	return e.propose(channelID, epoch, &proposal{typ: proposalAdd, add: kp})
}

// ProposeRemove proposes removing the member at leaf.
func (e *ExternalSender) ProposeRemove(channelID, epoch uint64, leaf uint32) ([]byte, error) {
	return e.propose(channelID, epoch, &proposal{typ: proposalRemove, removed: leaf})
}

// ProposalsAppend is the body of opcode 27 (DAVE_MLS_PROPOSALS) appending
// the given proposal messages.
func ProposalsAppend(msgs ...[]byte) []byte {
	return append([]byte{proposalsAppend}, marshal(func(b *cryptobyte.Builder) {
		addVec(b, func(b *cryptobyte.Builder) {
			for _, m := range msgs {
				b.AddBytes(m)
			}
		})
	})...)
}

// SplitCommitWelcome splits the body of opcode 28 into the commit, which
// the voice gateway announces with opcode 29, and the Welcome (nil if
// none), which it sends with opcode 30.
func SplitCommitWelcome(body []byte) (commit, welcome []byte, err error) {
	n, ok := publicMessageLen(cryptobyte.String(body))
	if !ok {
		return nil, nil, fmt.Errorf("dave: commit: %w", errShort)
	}
	if n == len(body) {
		return body, nil, nil
	}
	return body[:n], body[n:], nil
}

// LeafIndex is the leaf of userID in the group, which a remove proposal
// names.
func (s *Session) LeafIndex(userID uint64) (uint32, bool) {
	if s.group == nil {
		return 0, false
	}
	for i := uint32(0); i < s.group.tree.leaves(); i++ {
		if l := s.group.tree.leaf(i); l != nil {
			if id, err := l.credential.userID(); err == nil && id == userID {
				return i, true
			}
		}
	}
	return 0, false
}
