package dave

import (
	"fmt"

	"golang.org/x/crypto/cryptobyte"
)

// Wire formats (RFC 9420 §6).
const (
	wirePublic  uint16 = 1
	wirePrivate uint16 = 2
	wireWelcome uint16 = 3
)

// Sender types and content types (RFC 9420 §6).
const (
	senderMember    uint8 = 1
	senderExternal  uint8 = 2
	contentProposal uint8 = 2
	contentCommit   uint8 = 3
)

// Proposal types (RFC 9420 §17.4).
const (
	proposalAdd    uint16 = 1
	proposalUpdate uint16 = 2
	proposalRemove uint16 = 3
)

// groupContext is RFC 9420 §8.1's GroupContext.
type groupContext struct {
	groupID                 []byte
	epoch                   uint64
	treeHash                []byte
	confirmedTranscriptHash []byte
	extensions              []extension
}

func (g *groupContext) read(s *cryptobyte.String) bool {
	var version, suite uint16
	if !s.ReadUint16(&version) || !s.ReadUint16(&suite) || version != protocolVersion || suite != cipherSuite {
		return false
	}
	return readOpaque(s, &g.groupID) && s.ReadUint64(&g.epoch) && readOpaque(s, &g.treeHash) &&
		readOpaque(s, &g.confirmedTranscriptHash) && readExtensions(s, &g.extensions)
}

func (g *groupContext) add(b *cryptobyte.Builder) {
	b.AddUint16(protocolVersion)
	b.AddUint16(cipherSuite)
	addOpaque(b, g.groupID)
	b.AddUint64(g.epoch)
	addOpaque(b, g.treeHash)
	addOpaque(b, g.confirmedTranscriptHash)
	addExtensions(b, g.extensions)
}

func (g *groupContext) bytes() []byte { return marshal(g.add) }

// proposal is RFC 9420 §12.1's Proposal, for the two types DAVE's voice
// gateway sends (libdave accepts only these from the external sender).
type proposal struct {
	typ     uint16
	add     *keyPackage // proposalAdd
	removed uint32      // proposalRemove
}

func (p *proposal) read(s *cryptobyte.String) bool {
	if !s.ReadUint16(&p.typ) {
		return false
	}
	switch p.typ {
	case proposalAdd:
		p.add = &keyPackage{}
		return p.add.read(s)
	case proposalRemove:
		return s.ReadUint32(&p.removed)
	}
	return false
}

func (p *proposal) encode(b *cryptobyte.Builder) {
	b.AddUint16(p.typ)
	switch p.typ {
	case proposalAdd:
		p.add.add(b)
	case proposalRemove:
		b.AddUint32(p.removed)
	}
}

// updatePathNode and updatePath are RFC 9420 §7.6's.
type updatePathNode struct {
	encryptionKey []byte
	secrets       []hpkeCiphertext
}

type updatePath struct {
	leaf  leafNode
	nodes []updatePathNode
}

func (u *updatePath) read(s *cryptobyte.String) bool {
	return u.leaf.read(s) && readList(s, func(v *cryptobyte.String) bool {
		var n updatePathNode
		if !readOpaque(v, &n.encryptionKey) || !readList(v, func(w *cryptobyte.String) bool {
			var c hpkeCiphertext
			if !c.read(w) {
				return false
			}
			n.secrets = append(n.secrets, c)
			return true
		}) {
			return false
		}
		u.nodes = append(u.nodes, n)
		return true
	})
}

// commit is RFC 9420 §12.4's Commit. DAVE commits carry their proposals by
// reference (libdave refuses inline ones), and an update path when they
// remove someone.
type commit struct {
	refs [][]byte
	path *updatePath
}

func (c *commit) read(s *cryptobyte.String) bool {
	if !readList(s, func(v *cryptobyte.String) bool {
		var typ uint8
		if !v.ReadUint8(&typ) || typ != 2 { // ProposalOrRefType reference
			return false
		}
		var ref []byte
		if !readOpaque(v, &ref) {
			return false
		}
		c.refs = append(c.refs, ref)
		return true
	}) {
		return false
	}
	var present bool
	if !readOptional(s, &present) {
		return false
	}
	if present {
		c.path = &updatePath{}
		return c.path.read(s)
	}
	return true
}

// framedContent is RFC 9420 §6's FramedContent, kept with its encoding.
type framedContent struct {
	groupID       []byte
	epoch         uint64
	senderType    uint8
	senderIndex   uint32
	authData      []byte
	contentType   uint8
	proposal      *proposal
	commit        *commit
	raw           []byte // the FramedContent's encoding
	signature     []byte
	confirmTag    []byte // commits
	membershipTag []byte // member senders
	authRaw       []byte // FramedContentAuthData's encoding
}

// readPublicMessage reads RFC 9420 §6.2's PublicMessage (after the
// MLSMessage header).
func (f *framedContent) readPublicMessage(s *cryptobyte.String) bool {
	start := *s
	if !readOpaque(s, &f.groupID) || !s.ReadUint64(&f.epoch) || !s.ReadUint8(&f.senderType) {
		return false
	}
	switch f.senderType {
	case senderMember, senderExternal:
		if !s.ReadUint32(&f.senderIndex) {
			return false
		}
	default:
		return false
	}
	if !readOpaque(s, &f.authData) || !s.ReadUint8(&f.contentType) {
		return false
	}
	switch f.contentType {
	case contentProposal:
		f.proposal = &proposal{}
		if !f.proposal.read(s) {
			return false
		}
	case contentCommit:
		f.commit = &commit{}
		if !f.commit.read(s) {
			return false
		}
	default:
		return false
	}
	f.raw = append([]byte{}, start[:len(start)-len(*s)]...)
	authStart := *s
	if !readOpaque(s, &f.signature) {
		return false
	}
	if f.contentType == contentCommit && !readOpaque(s, &f.confirmTag) {
		return false
	}
	f.authRaw = append([]byte{}, authStart[:len(authStart)-len(*s)]...)
	if f.senderType == senderMember && !readOpaque(s, &f.membershipTag) {
		return false
	}
	return true
}

// tbs is FramedContentTBS (RFC 9420 §6.1); ctx is the group context for
// member senders, nil for external ones.
func (f *framedContent) tbs(ctx *groupContext) []byte {
	return marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(protocolVersion)
		b.AddUint16(wirePublic)
		b.AddBytes(f.raw)
		if f.senderType == senderMember {
			ctx.add(b)
		}
	})
}

// authenticatedContent is RFC 9420 §6.1's AuthenticatedContent, whose
// RefHash is a proposal's reference (§5.2).
func (f *framedContent) authenticatedContent() []byte {
	return marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(wirePublic)
		b.AddBytes(f.raw)
		b.AddBytes(f.authRaw)
	})
}

func (f *framedContent) ref() []byte {
	return refHash("MLS 1.0 Proposal Reference", f.authenticatedContent())
}

// parsePublicMessage reads an MLSMessage holding a PublicMessage.
func parsePublicMessage(data []byte) (*framedContent, error) {
	s := cryptobyte.String(data)
	var version, wire uint16
	if !s.ReadUint16(&version) || !s.ReadUint16(&wire) {
		return nil, fmt.Errorf("MLS message: %w", errShort)
	}
	if version != protocolVersion || wire != wirePublic {
		return nil, fmt.Errorf("MLS message: version %d, wire format %d: DAVE handshakes are MLS 1.0 PublicMessages", version, wire)
	}
	f := &framedContent{}
	if !f.readPublicMessage(&s) || !s.Empty() {
		return nil, fmt.Errorf("MLS public message: %w", errShort)
	}
	return f, nil
}

// encryptedGroupSecrets and welcome are RFC 9420 §12.4.3's.
type encryptedGroupSecrets struct {
	newMember []byte
	secrets   hpkeCiphertext
}

type welcome struct {
	secrets            []encryptedGroupSecrets
	encryptedGroupInfo []byte
}

// parseWelcome reads a Welcome, bare or wrapped in an MLSMessage.
func parseWelcome(data []byte) (*welcome, error) {
	s := cryptobyte.String(data)
	peek := s
	var version, wire uint16
	if peek.ReadUint16(&version) && peek.ReadUint16(&wire) && version == protocolVersion && wire == wireWelcome {
		s = peek
	}
	var suite uint16
	w := &welcome{}
	if !s.ReadUint16(&suite) || !readList(&s, func(v *cryptobyte.String) bool {
		var e encryptedGroupSecrets
		if !readOpaque(v, &e.newMember) || !e.secrets.read(v) {
			return false
		}
		w.secrets = append(w.secrets, e)
		return true
	}) || !readOpaque(&s, &w.encryptedGroupInfo) || !s.Empty() {
		return nil, fmt.Errorf("welcome: %w", errShort)
	}
	if suite != cipherSuite {
		return nil, fmt.Errorf("welcome: cipher suite %d, DAVE uses %d", suite, cipherSuite)
	}
	return w, nil
}

// groupSecrets is RFC 9420 §12.4.3's GroupSecrets; DAVE uses no PSKs.
type groupSecrets struct {
	joinerSecret []byte
	pathSecret   []byte
}

func parseGroupSecrets(data []byte) (*groupSecrets, error) {
	s := cryptobyte.String(data)
	g := &groupSecrets{}
	var present bool
	if !readOpaque(&s, &g.joinerSecret) || !readOptional(&s, &present) {
		return nil, fmt.Errorf("group secrets: %w", errShort)
	}
	if present && !readOpaque(&s, &g.pathSecret) {
		return nil, fmt.Errorf("group secrets: %w", errShort)
	}
	var psks cryptobyte.String
	if !readVec(&s, &psks) || !s.Empty() {
		return nil, fmt.Errorf("group secrets: %w", errShort)
	}
	if !psks.Empty() {
		return nil, fmt.Errorf("group secrets: pre-shared keys are not used by DAVE")
	}
	return g, nil
}

// groupInfo is RFC 9420 §12.4.3's GroupInfo.
type groupInfo struct {
	context    groupContext
	extensions []extension
	confirmTag []byte
	signer     uint32
	signature  []byte
	tbs        []byte
}

func parseGroupInfo(data []byte) (*groupInfo, error) {
	s := cryptobyte.String(data)
	g := &groupInfo{}
	if !g.context.read(&s) || !readExtensions(&s, &g.extensions) || !readOpaque(&s, &g.confirmTag) || !s.ReadUint32(&g.signer) {
		return nil, fmt.Errorf("group info: %w", errShort)
	}
	g.tbs = append([]byte{}, data[:len(data)-len(s)]...)
	if !readOpaque(&s, &g.signature) || !s.Empty() {
		return nil, fmt.Errorf("group info: %w", errShort)
	}
	return g, nil
}

func findExtension(exts []extension, typ uint16) ([]byte, bool) {
	for _, e := range exts {
		if e.typ == typ {
			return e.data, true
		}
	}
	return nil, false
}

// externalSender is RFC 9420 §12.1.8.1's ExternalSender: what the voice
// gateway sends in DAVE opcode 25.
type externalSender struct {
	signatureKey []byte
	credential   credential
}

func (e *externalSender) read(s *cryptobyte.String) bool {
	return readOpaque(s, &e.signatureKey) && e.credential.read(s)
}

func (e *externalSender) add(b *cryptobyte.Builder) {
	addOpaque(b, e.signatureKey)
	e.credential.add(b)
}
