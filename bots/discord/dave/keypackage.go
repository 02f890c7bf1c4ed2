package dave

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/cryptobyte"
)

// Extension types (RFC 9420 §17.3) DAVE uses.
const (
	extRatchetTree     uint16 = 2
	extExternalSenders uint16 = 5
)

const credentialBasic uint16 = 1 // RFC 9420 §17.5

// extension is RFC 9420 §13's Extension.
type extension struct {
	typ  uint16
	data []byte
}

func readExtensions(s *cryptobyte.String, out *[]extension) bool {
	return readList(s, func(v *cryptobyte.String) bool {
		var e extension
		if !v.ReadUint16(&e.typ) || !readOpaque(v, &e.data) {
			return false
		}
		*out = append(*out, e)
		return true
	})
}

func addExtensions(b *cryptobyte.Builder, exts []extension) {
	addVec(b, func(b *cryptobyte.Builder) {
		for _, e := range exts {
			b.AddUint16(e.typ)
			addOpaque(b, e.data)
		}
	})
}

// credential is RFC 9420 §5.3's Credential; DAVE uses only basic
// credentials whose identity is the Discord user ID as a big-endian uint64.
type credential struct {
	typ      uint16
	identity []byte // basic
	raw      []byte // the whole encoding, for other types
}

func basicCredential(userID uint64) credential {
	return credential{typ: credentialBasic, identity: binary.BigEndian.AppendUint64(nil, userID)}
}

func (c *credential) read(s *cryptobyte.String) bool {
	start := *s
	if !s.ReadUint16(&c.typ) {
		return false
	}
	switch c.typ {
	case credentialBasic:
		return readOpaque(s, &c.identity)
	default:
		// x509 (2): a vector of certificates; kept whole, refused by
		// userID.
		var certs cryptobyte.String
		if !readVec(s, &certs) {
			return false
		}
		c.raw = append([]byte{}, start[:len(start)-len(*s)]...)
		return true
	}
}

func (c *credential) add(b *cryptobyte.Builder) {
	if c.typ != credentialBasic {
		b.AddBytes(c.raw)
		return
	}
	b.AddUint16(c.typ)
	addOpaque(b, c.identity)
}

// userID returns the Discord user ID a basic credential names.
func (c *credential) userID() (uint64, error) {
	if c.typ != credentialBasic {
		return 0, fmt.Errorf("credential type %d: DAVE uses basic credentials only", c.typ)
	}
	if len(c.identity) != 8 {
		return 0, fmt.Errorf("basic credential identity of %d bytes: a user ID is 8", len(c.identity))
	}
	return binary.BigEndian.Uint64(c.identity), nil
}

// capabilities is RFC 9420 §7.2's Capabilities.
type capabilities struct {
	versions, cipherSuites, extensions, proposals, credentials []uint16
}

func readUint16s(s *cryptobyte.String, out *[]uint16) bool {
	return readList(s, func(v *cryptobyte.String) bool {
		var x uint16
		if !v.ReadUint16(&x) {
			return false
		}
		*out = append(*out, x)
		return true
	})
}

func addUint16s(b *cryptobyte.Builder, xs []uint16) {
	addVec(b, func(b *cryptobyte.Builder) {
		for _, x := range xs {
			b.AddUint16(x)
		}
	})
}

func (c *capabilities) read(s *cryptobyte.String) bool {
	return readUint16s(s, &c.versions) && readUint16s(s, &c.cipherSuites) &&
		readUint16s(s, &c.extensions) && readUint16s(s, &c.proposals) && readUint16s(s, &c.credentials)
}

func (c *capabilities) add(b *cryptobyte.Builder) {
	addUint16s(b, c.versions)
	addUint16s(b, c.cipherSuites)
	addUint16s(b, c.extensions)
	addUint16s(b, c.proposals)
	addUint16s(b, c.credentials)
}

// Leaf node sources (RFC 9420 §7.2).
const (
	sourceKeyPackage uint8 = 1
	sourceUpdate     uint8 = 2
	sourceCommit     uint8 = 3
)

// leafNode is RFC 9420 §7.2's LeafNode.
type leafNode struct {
	encryptionKey []byte
	signatureKey  []byte
	credential    credential
	capabilities  capabilities
	source        uint8
	notBefore     uint64 // source key_package
	notAfter      uint64
	parentHash    []byte // source commit
	extensions    []extension
	signature     []byte
}

func (n *leafNode) read(s *cryptobyte.String) bool {
	if !readOpaque(s, &n.encryptionKey) || !readOpaque(s, &n.signatureKey) ||
		!n.credential.read(s) || !n.capabilities.read(s) || !s.ReadUint8(&n.source) {
		return false
	}
	switch n.source {
	case sourceKeyPackage:
		if !s.ReadUint64(&n.notBefore) || !s.ReadUint64(&n.notAfter) {
			return false
		}
	case sourceUpdate:
	case sourceCommit:
		if !readOpaque(s, &n.parentHash) {
			return false
		}
	default:
		return false
	}
	return readExtensions(s, &n.extensions) && readOpaque(s, &n.signature)
}

// addContent writes the fields the signature covers, up to the extensions.
func (n *leafNode) addContent(b *cryptobyte.Builder) {
	addOpaque(b, n.encryptionKey)
	addOpaque(b, n.signatureKey)
	n.credential.add(b)
	n.capabilities.add(b)
	b.AddUint8(n.source)
	switch n.source {
	case sourceKeyPackage:
		b.AddUint64(n.notBefore)
		b.AddUint64(n.notAfter)
	case sourceCommit:
		addOpaque(b, n.parentHash)
	}
	addExtensions(b, n.extensions)
}

func (n *leafNode) add(b *cryptobyte.Builder) {
	n.addContent(b)
	addOpaque(b, n.signature)
}

func (n *leafNode) bytes() []byte { return marshal(n.add) }

// tbs is LeafNodeTBS: for update and commit sources the group ID and the
// leaf index are bound in too.
func (n *leafNode) tbs(groupID []byte, leaf uint32) []byte {
	return marshal(func(b *cryptobyte.Builder) {
		n.addContent(b)
		if n.source == sourceUpdate || n.source == sourceCommit {
			addOpaque(b, groupID)
			b.AddUint32(leaf)
		}
	})
}

func (n *leafNode) verify(groupID []byte, leaf uint32) error {
	if err := verifyWithLabel(n.signatureKey, "LeafNodeTBS", n.tbs(groupID, leaf), n.signature); err != nil {
		return fmt.Errorf("leaf %d: %w", leaf, err)
	}
	return nil
}

// keyPackage is RFC 9420 §10's KeyPackage.
type keyPackage struct {
	version     uint16
	cipherSuite uint16
	initKey     []byte
	leaf        leafNode
	extensions  []extension
	signature   []byte
}

func (k *keyPackage) read(s *cryptobyte.String) bool {
	return s.ReadUint16(&k.version) && s.ReadUint16(&k.cipherSuite) && readOpaque(s, &k.initKey) &&
		k.leaf.read(s) && readExtensions(s, &k.extensions) && readOpaque(s, &k.signature)
}

func (k *keyPackage) addContent(b *cryptobyte.Builder) {
	b.AddUint16(k.version)
	b.AddUint16(k.cipherSuite)
	addOpaque(b, k.initKey)
	k.leaf.add(b)
	addExtensions(b, k.extensions)
}

func (k *keyPackage) add(b *cryptobyte.Builder) {
	k.addContent(b)
	addOpaque(b, k.signature)
}

func (k *keyPackage) bytes() []byte { return marshal(k.add) }

// ref is RFC 9420 §5.2's KeyPackageRef.
func (k *keyPackage) ref() []byte {
	return refHash("MLS 1.0 KeyPackage Reference", k.bytes())
}

// validate makes RFC 9420 §10.1's checks of a key package in an Add: suite
// and version, both signatures, and init key distinct from the leaf's
// encryption key.
func (k *keyPackage) validate() error {
	if k.version != protocolVersion || k.cipherSuite != cipherSuite {
		return fmt.Errorf("key package: version %d, cipher suite %d: DAVE needs MLS 1.0 and suite 2", k.version, k.cipherSuite)
	}
	if k.leaf.source != sourceKeyPackage {
		return fmt.Errorf("key package: leaf node source %d, not key_package", k.leaf.source)
	}
	if bytes.Equal(k.initKey, k.leaf.encryptionKey) {
		return fmt.Errorf("key package: init key equals the leaf's encryption key")
	}
	if err := k.leaf.verify(nil, 0); err != nil {
		return fmt.Errorf("key package: %w", err)
	}
	if err := verifyWithLabel(k.leaf.signatureKey, "KeyPackageTBS", marshal(k.addContent), k.signature); err != nil {
		return fmt.Errorf("key package: %w", err)
	}
	return nil
}

// daveCapabilities are the leaf capabilities DAVE protocol version 1 sets
// (libdave's LeafNodeCapabilitiesForProtocolVersion): MLS 1.0, suite 2,
// basic credentials; no extra extensions or proposals.
func daveCapabilities() capabilities {
	return capabilities{versions: []uint16{protocolVersion}, cipherSuites: []uint16{cipherSuite}, credentials: []uint16{credentialBasic}}
}

// newKeyPackage builds and signs a key package for userID (RFC 9420 §10):
// a fresh init key, and a leaf node with the given encryption key. The
// lifetime is the widest, as libdave's (Lifetime::create_default): key
// packages live only for the join they are made for.
func newKeyPackage(userID uint64, sig *ecdsa.PrivateKey, leafKey, initKey hpkeKeyPair) (*keyPackage, error) {
	kp := &keyPackage{
		version:     protocolVersion,
		cipherSuite: cipherSuite,
		initKey:     initKey.pub,
		leaf: leafNode{
			encryptionKey: leafKey.pub,
			signatureKey:  signaturePublicKey(sig),
			credential:    basicCredential(userID),
			capabilities:  daveCapabilities(),
			source:        sourceKeyPackage,
			notBefore:     0,
			notAfter:      ^uint64(0),
		},
	}
	var err error
	if kp.leaf.signature, err = signWithLabel(sig, "LeafNodeTBS", kp.leaf.tbs(nil, 0)); err != nil {
		return nil, err
	}
	if kp.signature, err = signWithLabel(sig, "KeyPackageTBS", marshal(kp.addContent)); err != nil {
		return nil, err
	}
	return kp, nil
}

func parseKeyPackage(data []byte) (*keyPackage, error) {
	s := cryptobyte.String(data)
	kp := &keyPackage{}
	if !kp.read(&s) || !s.Empty() {
		return nil, fmt.Errorf("key package: %w", errShort)
	}
	return kp, nil
}
