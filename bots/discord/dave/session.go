package dave

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/crypto/cryptobyte"
)

// ProtocolVersion is the DAVE protocol version this package speaks.
const ProtocolVersion = 1

// Proposals operation types (DAVE opcode 27).
const (
	proposalsAppend uint8 = 0
	proposalsRevoke uint8 = 1
)

// ErrNotJoined is returned by operations that need the group before this
// member has been welcomed into it.
var ErrNotJoined = errors.New("dave: not in the group yet")

// Session is one member's DAVE state in one voice channel: the MLS group
// whose ID is the channel ID (big-endian uint64) and whose members are
// identified by their Discord user IDs. As libdave does, it commits every
// batch of proposals the voice gateway sends, whether it is in the group
// or alone in its pending group, and moves to the next epoch by the commit
// the gateway announces (its own or another member's) or by a Welcome. It
// is not safe for concurrent use.
type Session struct {
	userID    uint64
	channelID uint64
	sig       *ecdsa.PrivateKey

	external []byte // the voice gateway's ExternalSender (opcode 25)

	kp       *keyPackage
	initPriv []byte
	leafPriv []byte

	group    *group        // the group once joined or established
	enc      *Encryptor    // this member's encryptor in group's epoch
	pending  *group        // this member alone, before any commit (RFC 9420 §11)
	outbound *commitOutput // this member's last commit, until announced
}

// NewSession starts a session for user userID in voice channel channelID,
// with a fresh signing key.
func NewSession(userID, channelID uint64) (*Session, error) {
	if userID == 0 || channelID == 0 {
		return nil, errors.New("dave: user ID and channel ID must be set")
	}
	sig, err := newSignatureKey()
	if err != nil {
		return nil, fmt.Errorf("dave: signing key: %w", err)
	}
	return &Session{userID: userID, channelID: channelID, sig: sig}, nil
}

func (s *Session) groupID() []byte { return binary.BigEndian.AppendUint64(nil, s.channelID) }

// SetExternalSender takes the body of opcode 25 (DAVE_MLS_EXTERNAL_SENDER):
// the voice gateway's ExternalSender (RFC 9420 §12.1.8.1).
func (s *Session) SetExternalSender(data []byte) error {
	str := cryptobyte.String(data)
	var e externalSender
	if !e.read(&str) || !str.Empty() {
		return fmt.Errorf("dave: external sender: %w", errShort)
	}
	if _, err := parseSignatureKey(e.signatureKey); err != nil {
		return fmt.Errorf("dave: external sender: %w", err)
	}
	s.external = slices.Clone(data)
	return nil
}

// KeyPackage makes a fresh key package for the body of opcode 26
// (DAVE_MLS_KEY_PACKAGE); a key package is used for one join only.
func (s *Session) KeyPackage() ([]byte, error) {
	leaf, err := newHPKEKey()
	if err != nil {
		return nil, err
	}
	init, err := newHPKEKey()
	if err != nil {
		return nil, err
	}
	kp, err := newKeyPackage(s.userID, s.sig, leaf, init)
	if err != nil {
		return nil, fmt.Errorf("dave: key package: %w", err)
	}
	s.kp, s.initPriv, s.leafPriv = kp, init.priv, leaf.priv
	return kp.bytes(), nil
}

// ProcessWelcome takes the Welcome of opcode 30 (DAVE_MLS_WELCOME, after
// its transition ID) and joins the group. The group must name the voice
// gateway's external sender, alone, as libdave requires.
func (s *Session) ProcessWelcome(data []byte) error {
	if s.kp == nil {
		return errors.New("dave: welcome before a key package was made")
	}
	if s.external == nil {
		return errors.New("dave: welcome before the external sender was set")
	}
	g, err := joinGroup(data, s.kp, s.initPriv, s.leafPriv, s.sig)
	if err != nil {
		return fmt.Errorf("dave: %w", err)
	}
	if !bytes.Equal(g.ctx.groupID, s.groupID()) {
		return fmt.Errorf("dave: welcome is for group %x, not channel %d", g.ctx.groupID, s.channelID)
	}
	for i := uint32(0); i < g.tree.leaves(); i++ {
		if l := g.tree.leaf(i); l != nil {
			if _, err := l.credential.userID(); err != nil {
				return fmt.Errorf("dave: welcome: leaf %d: %w", i, err)
			}
		}
	}
	if len(g.senders) != 1 || !bytes.Equal(marshal(g.senders[0].add), s.external) {
		return errors.New("dave: welcome's group does not have the voice gateway as its one external sender")
	}
	s.group = g
	s.pending, s.outbound = nil, nil
	s.kp, s.initPriv, s.leafPriv = nil, nil, nil
	return nil
}

// ProcessProposals takes the body of opcode 27 (DAVE_MLS_PROPOSALS): an
// operation type, then either MLS messages holding proposals from the
// voice gateway (append) or proposal references (revoke). It commits the
// proposals queued so far and returns the commit and, when it adds
// members, their Welcome: the body of opcode 28 (DAVE_MLS_COMMIT_WELCOME)
// is the two one after the other. Before this member is in a group the
// proposals go to its pending group, which it creates then.
//
// recognized are the users the voice gateway said are in the call
// (opcodes 11 and 13); a proposal to add anyone else is refused, as
// libdave refuses it.
func (s *Session) ProcessProposals(data []byte, recognized []uint64) (commit, welcome []byte, err error) {
	target := s.group
	if target == nil {
		if s.pending == nil {
			if err := s.createPending(); err != nil {
				return nil, nil, err
			}
		}
		target = s.pending
	}
	if err := s.queueProposals(target, data, recognized); err != nil {
		return nil, nil, err
	}
	if len(target.proposals) == 0 {
		s.outbound = nil
		return nil, nil, nil
	}
	out, err := target.commitProposals(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("dave: committing proposals: %w", err)
	}
	s.outbound = out
	return out.message, out.welcome, nil
}

// createPending creates this member's one-member group, with the leaf of
// its key package as libdave does.
func (s *Session) createPending() error {
	if s.external == nil {
		return errors.New("dave: proposals before the external sender was set")
	}
	if s.kp == nil {
		if _, err := s.KeyPackage(); err != nil {
			return err
		}
	}
	leaf := s.kp.leaf
	g, err := newGroup(s.groupID(), &leaf, s.leafPriv, s.sig, s.external)
	if err != nil {
		return fmt.Errorf("dave: creating the pending group: %w", err)
	}
	s.pending = g
	return nil
}

func (s *Session) queueProposals(target *group, data []byte, recognized []uint64) error {
	str := cryptobyte.String(data)
	var op uint8
	if !str.ReadUint8(&op) {
		return fmt.Errorf("dave: proposals: %w", errShort)
	}
	switch op {
	case proposalsAppend:
		var msgs [][]byte
		if !readList(&str, func(v *cryptobyte.String) bool {
			n, ok := publicMessageLen(*v)
			if !ok {
				return false
			}
			var m []byte
			if !v.ReadBytes(&m, n) {
				return false
			}
			msgs = append(msgs, m)
			return true
		}) || !str.Empty() {
			return fmt.Errorf("dave: proposals: %w", errShort)
		}
		for _, m := range msgs {
			f, err := parsePublicMessage(m)
			if err != nil {
				return fmt.Errorf("dave: proposals: %w", err)
			}
			if f.proposal != nil && f.proposal.typ == proposalAdd {
				id, err := f.proposal.add.leaf.credential.userID()
				if err != nil {
					return fmt.Errorf("dave: add proposal: %w", err)
				}
				if !slices.Contains(recognized, id) {
					return fmt.Errorf("dave: add proposal for user %d, who is not in the call", id)
				}
			}
			if err := target.addProposal(f); err != nil {
				return fmt.Errorf("dave: %w", err)
			}
		}
	case proposalsRevoke:
		var refs [][]byte
		if !readList(&str, func(v *cryptobyte.String) bool {
			var r []byte
			if !readOpaque(v, &r) {
				return false
			}
			refs = append(refs, r)
			return true
		}) || !str.Empty() {
			return fmt.Errorf("dave: proposal revocation: %w", errShort)
		}
		if err := target.revokeProposals(refs); err != nil {
			return fmt.Errorf("dave: %w", err)
		}
	default:
		return fmt.Errorf("dave: proposals: operation type %d", op)
	}
	return nil
}

// publicMessageLen measures the MLSMessage at the start of s.
func publicMessageLen(s cryptobyte.String) (int, bool) {
	start := len(s)
	var version, wire uint16
	if !s.ReadUint16(&version) || !s.ReadUint16(&wire) || wire != wirePublic {
		return 0, false
	}
	var f framedContent
	if !f.readPublicMessage(&s) {
		return 0, false
	}
	return start - len(s), true
}

// ProcessCommit takes the commit of opcode 29
// (DAVE_MLS_ANNOUNCE_COMMIT_TRANSITION, after its transition ID) and moves
// the group to the next epoch. It returns ErrRemoved when the commit
// removes this member.
func (s *Session) ProcessCommit(data []byte) error {
	if s.outbound != nil && bytes.Equal(data, s.outbound.message) {
		s.group = s.outbound.next
		s.pending, s.outbound = nil, nil
		s.kp, s.initPriv, s.leafPriv = nil, nil, nil
		return nil
	}
	if s.group == nil {
		return ErrNotJoined
	}
	f, err := parsePublicMessage(data)
	if err != nil {
		return fmt.Errorf("dave: commit: %w", err)
	}
	next, err := s.group.applyCommit(f)
	if errors.Is(err, ErrRemoved) {
		s.group, s.outbound = nil, nil
		return ErrRemoved
	}
	if err != nil {
		return fmt.Errorf("dave: %w", err)
	}
	s.group, s.outbound = next, nil
	return nil
}

// Epoch is the group's epoch; ok is false before joining.
func (s *Session) Epoch() (epoch uint64, ok bool) {
	if s.group == nil {
		return 0, false
	}
	return s.group.ctx.epoch, true
}

// EpochAuthenticator is the epoch's authenticator (RFC 9420 §8.7), from
// which DAVE's voice privacy code is made.
func (s *Session) EpochAuthenticator() []byte {
	if s.group == nil {
		return nil
	}
	return slices.Clone(s.group.secrets.epochAuthenticator)
}

// UserIDs lists the group's members.
func (s *Session) UserIDs() []uint64 {
	if s.group == nil {
		return nil
	}
	var ids []uint64
	for i := uint32(0); i < s.group.tree.leaves(); i++ {
		if l := s.group.tree.leaf(i); l != nil {
			if id, err := l.credential.userID(); err == nil {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// senderRatchet is the key ratchet of userID's frames in this epoch.
func (s *Session) senderRatchet(userID uint64) (*keyRatchet, error) {
	if s.group == nil {
		return nil, ErrNotJoined
	}
	if !slices.Contains(s.UserIDs(), userID) {
		return nil, fmt.Errorf("dave: user %d is not in the group", userID)
	}
	base := s.group.exporter(exporterLabel, binary.LittleEndian.AppendUint64(nil, userID), aeadKey)
	return newKeyRatchet(base), nil
}

// Encryptor returns the encryptor of this member's frames in the current
// epoch. It is the same one for the whole epoch: two encryptors over one
// key would reuse nonces.
func (s *Session) Encryptor() (*Encryptor, error) {
	if s.enc != nil && s.enc.group == s.group {
		return s.enc, nil
	}
	r, err := s.senderRatchet(s.userID)
	if err != nil {
		return nil, err
	}
	s.enc = &Encryptor{ratchet: r, group: s.group}
	return s.enc, nil
}

// Decryptor returns a decryptor for userID's frames in the current epoch.
func (s *Session) Decryptor(userID uint64) (*Decryptor, error) {
	r, err := s.senderRatchet(userID)
	if err != nil {
		return nil, err
	}
	return &Decryptor{ratchet: r}, nil
}
