package dave

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/cloudflare/circl/hpke"
	"golang.org/x/crypto/cryptobyte"
)

// The one cipher suite DAVE uses (protocol version 1):
// MLS_128_DHKEMP256_AES128GCM_SHA256_P256, value 2 (RFC 9420 §17.1):
// DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, SHA-256, and
// ECDSA P-256 with SHA-256 signatures.
const (
	cipherSuite     uint16 = 2
	protocolVersion uint16 = 1 // mls10

	hashSize  = sha256.Size // Nh
	aeadKey   = 16          // Nk
	aeadNonce = 12          // Nn
)

var hpkeSuite = hpke.NewSuite(hpke.KEM_P256_HKDF_SHA256, hpke.KDF_HKDF_SHA256, hpke.AEAD_AES128GCM)

const labelPrefix = "MLS 1.0 "

func hash(data ...[]byte) []byte {
	h := sha256.New()
	for _, d := range data {
		h.Write(d)
	}
	return h.Sum(nil)
}

// extract is KDF.Extract(salt, ikm) (RFC 5869 §2.2).
func extract(salt, ikm []byte) []byte {
	if salt == nil {
		salt = []byte{}
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		panic(fmt.Sprintf("dave: hkdf extract: %v", err))
	}
	return prk
}

// expandWithLabel is RFC 9420 §8's ExpandWithLabel: KDF.Expand(secret,
// KDFLabel{length, "MLS 1.0 "+label, context}, length).
func expandWithLabel(secret []byte, label string, context []byte, length int) []byte {
	info := marshal(func(b *cryptobyte.Builder) {
		b.AddUint16(uint16(length))
		addOpaque(b, []byte(labelPrefix+label))
		addOpaque(b, context)
	})
	out, err := hkdf.Expand(sha256.New, secret, string(info), length)
	if err != nil {
		panic(fmt.Sprintf("dave: hkdf expand: %v", err))
	}
	return out
}

// deriveSecret is RFC 9420 §8's DeriveSecret(secret, label).
func deriveSecret(secret []byte, label string) []byte {
	return expandWithLabel(secret, label, nil, hashSize)
}

// refHash is RFC 9420 §5.2's RefHash(label, value).
func refHash(label string, value []byte) []byte {
	return hash(marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, []byte(label))
		addOpaque(b, value)
	}))
}

func mac(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// signContent is RFC 9420 §5.1.2's SignContent{"MLS 1.0 "+label, content}.
func signContent(label string, content []byte) []byte {
	return marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, []byte(labelPrefix+label))
		addOpaque(b, content)
	})
}

// signWithLabel is RFC 9420 §5.1.2's SignWithLabel, with ECDSA P-256 over
// SHA-256 and the DER (ASN.1) signature encoding of TLS 1.3's
// ecdsa_secp256r1_sha256.
func signWithLabel(key *ecdsa.PrivateKey, label string, content []byte) ([]byte, error) {
	digest := sha256.Sum256(signContent(label, content))
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", label, err)
	}
	return sig, nil
}

// verifyWithLabel is RFC 9420 §5.1.2's VerifyWithLabel; pub is a
// SignaturePublicKey: an uncompressed P-256 point.
func verifyWithLabel(pub []byte, label string, content, sig []byte) error {
	key, err := parseSignatureKey(pub)
	if err != nil {
		return err
	}
	digest := sha256.Sum256(signContent(label, content))
	if !ecdsa.VerifyASN1(key, digest[:], sig) {
		return fmt.Errorf("%s: signature does not verify", label)
	}
	return nil
}

func parseSignatureKey(pub []byte) (*ecdsa.PublicKey, error) {
	key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub)
	if err != nil {
		return nil, fmt.Errorf("signature key: %w", err)
	}
	return key, nil
}

// signaturePublicKey encodes key as an uncompressed point (SEC 1 §2.3.3).
func signaturePublicKey(key *ecdsa.PrivateKey) []byte {
	b, err := key.PublicKey.Bytes()
	if err != nil {
		panic(fmt.Sprintf("dave: encoding a P-256 key: %v", err))
	}
	return b
}

// newSignatureKey makes a fresh ECDSA P-256 signing key.
func newSignatureKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// hpkeKeyPair is a DHKEM(P-256) key pair: pub is an uncompressed point, priv
// the 32-byte scalar (RFC 9180 §7.1.2 SerializePrivateKey).
type hpkeKeyPair struct {
	pub  []byte
	priv []byte
}

func newHPKEKey() (hpkeKeyPair, error) {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return hpkeKeyPair{}, fmt.Errorf("generating an HPKE key: %w", err)
	}
	return hpkeKeyPair{pub: k.PublicKey().Bytes(), priv: k.Bytes()}, nil
}

// deriveHPKEKey is the KEM's DeriveKeyPair (RFC 9180 §7.1.3), as RFC 9420
// §7.4 derives a tree node's key pair from its node secret.
func deriveHPKEKey(secret []byte) (hpkeKeyPair, error) {
	pk, sk := hpke.KEM_P256_HKDF_SHA256.Scheme().DeriveKeyPair(secret)
	pub, err := pk.MarshalBinary()
	if err != nil {
		return hpkeKeyPair{}, err
	}
	priv, err := sk.MarshalBinary()
	if err != nil {
		return hpkeKeyPair{}, err
	}
	return hpkeKeyPair{pub: pub, priv: priv}, nil
}

// hpkeCiphertext is RFC 9420 §5.1.3's HPKECiphertext.
type hpkeCiphertext struct {
	kemOutput  []byte
	ciphertext []byte
}

func (c *hpkeCiphertext) read(s *cryptobyte.String) bool {
	return readOpaque(s, &c.kemOutput) && readOpaque(s, &c.ciphertext)
}

func (c *hpkeCiphertext) add(b *cryptobyte.Builder) {
	addOpaque(b, c.kemOutput)
	addOpaque(b, c.ciphertext)
}

func encryptContext(label string, context []byte) []byte {
	return marshal(func(b *cryptobyte.Builder) {
		addOpaque(b, []byte(labelPrefix+label))
		addOpaque(b, context)
	})
}

// encryptWithLabel is RFC 9420 §5.1.3's EncryptWithLabel: HPKE base mode
// SealBase with info = EncryptContext{label, context} and empty aad.
func encryptWithLabel(rnd io.Reader, pub []byte, label string, context, plaintext []byte) (hpkeCiphertext, error) {
	pk, err := hpke.KEM_P256_HKDF_SHA256.Scheme().UnmarshalBinaryPublicKey(pub)
	if err != nil {
		return hpkeCiphertext{}, fmt.Errorf("HPKE public key: %w", err)
	}
	sender, err := hpkeSuite.NewSender(pk, encryptContext(label, context))
	if err != nil {
		return hpkeCiphertext{}, err
	}
	enc, sealer, err := sender.Setup(rnd)
	if err != nil {
		return hpkeCiphertext{}, err
	}
	ct, err := sealer.Seal(plaintext, nil)
	if err != nil {
		return hpkeCiphertext{}, err
	}
	return hpkeCiphertext{kemOutput: enc, ciphertext: ct}, nil
}

// decryptWithLabel is RFC 9420 §5.1.3's DecryptWithLabel.
func decryptWithLabel(priv []byte, label string, context []byte, ct hpkeCiphertext) ([]byte, error) {
	sk, err := hpke.KEM_P256_HKDF_SHA256.Scheme().UnmarshalBinaryPrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("HPKE private key: %w", err)
	}
	recv, err := hpkeSuite.NewReceiver(sk, encryptContext(label, context))
	if err != nil {
		return nil, err
	}
	opener, err := recv.Setup(ct.kemOutput)
	if err != nil {
		return nil, fmt.Errorf("HPKE setup: %w", err)
	}
	pt, err := opener.Open(ct.ciphertext, nil)
	if err != nil {
		return nil, fmt.Errorf("HPKE open: %w", err)
	}
	return pt, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

var errDecrypt = errors.New("decryption failed")
